// SPDX-License-Identifier: Apache-2.0
// A rank's last words. When the plugin kills the process that hosts it (a
// fatal signal, abort(), exit()), or when the coordinator asks a rank that
// overran its deadline for its stack, the process writes one Msg::Crash
// frame to its control connection: what happened, the activity in
// progress (the plugin call), and the frames of the thread, as module path
// and offset. The receiving side turns those into function names.
//
// The handlers stay first even when a library the plugin loads installs
// its own SIGSEGV handler: this executable exports sigaction() and
// signal(), which, once armed, record such a handler instead of installing
// it and call it after the report is written (so the library's behaviour,
// often exit(1), is kept, and the report says what it hid).
#pragma once

#include <string>

namespace conformance::crash {

// Sent to a rank past its deadline: its main thread writes its stack and
// carries on (the coordinator kills it right after).
int stackSignal();

// Installs the handlers and an atexit hook in this (child) process; frames
// go to `fd`, which must stay open.
void arm(int fd);
// Stops reporting (the process is about to end normally, or `fd` closes).
void disarm();
// Whether the step in progress is what a SHOULD scenario exercises (a bad
// mhandle handed to isend, a receive after the peer died): a crash there
// only breaks that SHOULD rule; anywhere else it breaks NCCL.
void setShouldStep(bool inStep);
// True when the report (a frame body) says the crash hit such a step.
bool inShouldStep(const std::string& body);
// What the process is doing now ("connect(...) call #1"); cheap, and safe
// to call from any thread.
void setActivity(const std::string& what);

// The frame body as a report: "killed by SIGSEGV (fault at 0x0) while
// connect(...); stack: #0 connect (conf_tcp.cc:152) in libx.so+0x1a2b | ..."
// Frames are symbolized with addr2line where it is installed and the
// module has symbols, else by the dynamic symbol dladdr found.
std::string describe(const std::string& body);

}  // namespace conformance::crash
