// SPDX-License-Identifier: Apache-2.0
// sdk-socket: the software CollNet's tables, ncclCollNetPlugin_v6 to _v12,
// beside the net table: NCCL looks for them only in the library its net
// table came from (plugin/net.cc ncclNetPluginLoad), and uses them with
// NCCL_COLLNET_ENABLE=1 (docs/collnet.md).
#include "collnet_plugin.hpp"
#include "ncclnet/collnet.hpp"

NCCLNET_EXPORT_COLLNET_PLUGIN(ncclnet::socket::collnet::SocketCollNet)
