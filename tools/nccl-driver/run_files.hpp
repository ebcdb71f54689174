// SPDX-License-Identifier: Apache-2.0
// The files one job leaves in the run folder, named in one place: each
// rank's NCCL log (its stdout and stderr), its result file, and the
// communicator ids rank 0 hands to the others. A result file is lines:
//   VERSION <nccl version code>
//   POINT <op> <bytes> <time_us> ok|FAIL
//   MISMATCH <op> <bytes> element <i> is <got>, expected <want>
//   EVENT <what> <seconds>        (aborted, killing)
//   ERROR <one line>
//   DONE
#pragma once

#include <string>

namespace nccldriver {

struct RunFiles {
  std::string dir;
  int job = 0;  // the job's index in the run

  std::string log(int rank) const { return base() + ".rank" + std::to_string(rank) + ".log"; }
  std::string result(int rank) const { return base() + ".rank" + std::to_string(rank) + ".result"; }
  // `tag`: "main", or the init cycle's number.
  std::string uniqueId(const std::string& tag) const { return base() + ".id." + tag; }

 private:
  std::string base() const { return dir + "/job" + std::to_string(job); }
};

}  // namespace nccldriver
