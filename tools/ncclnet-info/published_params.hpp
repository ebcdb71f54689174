// SPDX-License-Identifier: Apache-2.0
// ncclnet-info: the knobs a plugin library publishes in its file
// (NCCLNET_PUBLISH_KNOBS), listed without init.
#pragma once

#include "inspection.hpp"

namespace ncclnet::info {

// Reads the published table of the library NCCL would load (else of the
// first one the Loader opened, else of a path given that did not open) into
// inspection->params with this environment's values, and records the file
// in ->paramsLibrary. Leaves ->params alone when no file publishes one; a
// file that cannot be read sets ->paramsError.
void readPublishedParams(Inspection* inspection);

}  // namespace ncclnet::info
