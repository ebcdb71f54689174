// SPDX-License-Identifier: Apache-2.0
// softverbs: the RC queue-pair engine — requester and responder sides of
// SEND, RDMA WRITE (with immediate) and RDMA READ, completions, and the
// error state. Functions marked "locked" expect the device mutex held.
#pragma once

#include <infiniband/verbs.h>

#include "objects.hpp"

namespace softverbs {

class Device;

int postSend(Qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr);
int postRecv(Qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr);
int modifyQp(Qp* qp, const ibv_qp_attr* attr, int mask);
int queryQp(Qp* qp, ibv_qp_attr* attr, ibv_qp_init_attr* init);

// locked: one packet from peer device `peer`, as requester or responder.
void handleInbound(Device& device, uint32_t peer, Inbound&& in);
// locked: the QP goes to the error state; every outstanding WR completes
// with IBV_WC_WR_FLUSH_ERR.
void enterError(Qp* qp);
// locked: the oldest send WR completes with `status`, then enterError.
void failHead(Qp* qp, ibv_wc_status status);
// locked: drops every WR and held request without completions (to RESET).
void resetQueues(Qp* qp);

// Affiliated async events (events.cc), queued on the context that owns
// the QP or CQ. Callable with the device mutex held.
void raiseQpEvent(Qp* qp, ibv_event_type type);
void raiseCqEvent(Cq* cq, ibv_event_type type);

}  // namespace softverbs
