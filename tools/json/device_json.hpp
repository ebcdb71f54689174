// SPDX-License-Identifier: Apache-2.0
// A device's properties as one JSON object: the one shape ncclnet-info's
// report (plugin.devices[]) and the suite's report (plugin.devices[]) share.
#pragma once

#include "device_properties.hpp"
#include "json_text.hpp"

namespace ncclnet::json {

// {index, status} and, when getProperties succeeded, every v12 property,
// ptrSupportText, netDeviceTypeName, vProps {ndevs, devs} and `defaulted`:
// the fields `abiVersion`'s properties lack, left at NCCL's defaults.
Json devicePropertiesJson(const DeviceProperties& device, int abiVersion);

}  // namespace ncclnet::json
