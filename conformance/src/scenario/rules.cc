// SPDX-License-Identifier: Apache-2.0
// Titles of the contract rules; a failure message starts with one of them.
#include "scenario/rules.hpp"

namespace conformance {

const char* ruleTitle(int rule) {
  switch (rule) {
    case kRuleProfile: return "expectation of the profile";
    case 1: return "ncclNetPlugin_vN tables are exported and load with RTLD_NOW";
    case 2: return "the table name is set, usable by NCCL_NET, and the same in every table";
    case 3: return "init/finalize pair per communicator, repeatable, one context each";
    case 4: return "devices() reports at least one device, the same count every time";
    case 5: return "phandles may be NULL";
    case 6: return "pciPath resolves under /sys or is NULL";
    case 8: return "device names are unique";
    case 9: return "ptrSupport is coherent with regMrDmaBuf";
    case 10: return "regIsGlobal promises cheap re-registration of sub-ranges";
    case 11: return "forceFlush: a plugin that asks NCCL to flush GPU receives flushes them";
    case 12: return "speed is in Mbps and positive";
    case 14: return "latency is in microseconds and not negative";
    case 15: return "maxComms connections can be open at once";
    case 16: return "maxRecvs is in 1..8";
    case 17: return "netDeviceType/netDeviceVersion is HOST/INVALID or UNPACK/7";
    case 18: return "maxP2pBytes and maxCollBytes are in (0, 1 TiB]";
    case 19: return "vProps lists valid physical devices, no more than the ABI allows";
    case 20: return "maxMultiRequestSize >= 1 and railId/planeId are UNDEF or valid";
    case 21: return "listen never blocks; a listen may be closed without any accept";
    case 22: return "connect and accept never block and are retried with the same handle";
    case 23: return "sendDevComm/recvDevComm may be NULL";
    case 24: return "the traffic class of a context is accepted";
    case 25: return "regMr registers host memory, and CUDA memory if advertised, on either comm";
    case 26:
      return "regMrDmaBuf registers a dma-buf range; the fd may be closed right after the call";
    case 27: return "deregMr releases every handle, before the comm is closed";
    case 28: return "32 requests per comm and 32 x maxRecvs isends can be in flight";
    case 29: return "a NULL request means try again; irecv always writes *request";
    case 30:
      return "tags route a send into a buffer of the oldest grouped receive, in posting order";
    case 31: return "the n buffers of a grouped receive complete together with their own sizes";
    case 32:
      return "a receive may be larger than the send; a larger send is an error, never corruption";
    case 33: return "zero-byte messages complete";
    case 34: return "a receive posted with the optional-completion hint is still testable";
    case 35: return "test() reports done with the received sizes, and every byte arrives intact";
    case 36:
      return "iflush returns NULL or a completable request; after it, GPU receives are visible";
    case 37: return "irecvConsumed is accepted once per completed receive";
    case 40: return "calls may come from several threads at once";
    case kRuleCloseInFlight: return "comms close cleanly with requests in flight";
    case kRuleLeaks: return "create/destroy cycles return every descriptor";
    case kRulePeerDeath: return "a dead peer surfaces as an error, never as a hang";
    case kRuleErrorPaths: return "bad handles and mhandles return errors without crashing";
    default: return "contract rule";
  }
}

std::string ruleLabel(int rule) {
  if (rule == kRuleProfile) return "profile (expectation of the profile)";
  if (rule > 100) {
    return "field rule F" + std::to_string(rule - 100) + " (" + ruleTitle(rule) + ")";
  }
  return "rule " + std::to_string(rule) + " (" + ruleTitle(rule) + ")";
}

}  // namespace conformance
