// SPDX-License-Identifier: Apache-2.0
// nccl-net-sdk test kit: two roles of a test in two children.
#include "ncclnet/testing/process_roles.hpp"

#include <memory>

#include "ncclnet/testing/child_process.hpp"
#include "ncclnet/testing/deadline.hpp"

namespace ncclnet::testing {
namespace {

// A child that runs `role` on `mine` and writes what it returned to the
// parent; the other end of the pair (`theirs`) is closed in the child.
std::unique_ptr<ChildProcess> start(const Role& role, Channel& mine, Channel& theirs) {
  return std::make_unique<ChildProcess>([&](Channel& parent) {
    theirs.close();
    std::string error = role(mine);
    if (!error.empty()) parent.send(error.data(), error.size());
    return error.empty() ? 0 : 1;
  });
}

// "" for a role that succeeded, else one line about it.
std::string verdict(ChildProcess& child, const char* name, const Deadline& deadline) {
  if (!child.started()) return std::string(name) + ": fork failed";
  double left = deadline.remainingMs() / 1000.0;
  ExitStatus status = child.wait(left);
  if (status.succeeded()) return "";
  std::string said = status.kind == ExitStatus::Kind::Exited ? child.channel().receiveRest(1) : "";
  return std::string(name) + ": " + (said.empty() ? status.describe() : said);
}

}  // namespace

std::string runRoles(const Role& first, const Role& second, double seconds) {
  Channel a, b;
  if (!Channel::makePair(&a, &b)) return "socketpair failed";
  std::unique_ptr<ChildProcess> firstChild;
  if (first) firstChild = start(first, a, b);
  std::unique_ptr<ChildProcess> secondChild = start(second, b, a);
  a.close();
  b.close();
  Deadline deadline(seconds);
  std::string errors;
  if (firstChild) errors = verdict(*firstChild, "first role", deadline);
  std::string other = verdict(*secondChild, first ? "second role" : "role", deadline);
  if (!other.empty()) errors += (errors.empty() ? "" : "\n") + other;
  return errors;
}

}  // namespace ncclnet::testing
