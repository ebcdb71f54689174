// SPDX-License-Identifier: Apache-2.0
// One rank of a job, in its own process: joins the communicator through
// the id file rank 0 writes, runs every op at every size, checks every
// element of every output, times the rest, and writes its result file
// (run_files.hpp). Every wait polls NCCL's asynchronous error and has a
// deadline: a rank whose peer died fails with NCCL's error and aborts its
// communicator instead of waiting forever on a kernel that cannot finish.
#pragma once

#include "options.hpp"

namespace nccldriver {

// Worker exit codes, read by the launcher. Far from 1 and 2, which a
// plugin's own exit() (from a signal handler, say) tends to use.
enum WorkerExit : int {
  kWorkerOk = 0,
  kWorkerWrongResult = 71,
  kWorkerSetupFailed = 72,  // no GPU, id file never came, CUDA error
  kWorkerNcclError = 73,    // NCCL returned or raised an error
  kWorkerDeadline = 74,     // a wait outlived the job's time
};

int runWorker(const Options& o);

// `--probe`: what a job here would run on, in two lines: "nccl 2.28.9" (the
// NCCL it links) and "gpus N" (the CUDA runtime's device count, then its
// error when it has none).
int printProbe();

}  // namespace nccldriver
