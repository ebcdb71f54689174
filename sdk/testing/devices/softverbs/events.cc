// SPDX-License-Identifier: Apache-2.0
// softverbs: raising asynchronous events — affiliated events the engine
// raises on a QP or CQ, and the test hook that raises what software cannot
// cause (a device failing, a link going down).
#include <cerrno>
#include <cstdint>

#include "device.hpp"
#include "engine.hpp"
#include "test_hooks.h"

#define SOFTVERBS_EXPORT __attribute__((visibility("default")))

namespace softverbs {
namespace {

void queueOn(ibv_context* context, const ibv_async_event& event) {
  if (AsyncQueue* queue = contextOf(context)->async.get()) queue->push(event);
}

bool isPortEvent(int type) {
  switch (type) {
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE: return true;
    default: return false;
  }
}

// device mutex held
int raiseOn(Device& device, int type, uint32_t element) {
  ibv_async_event event{};
  event.event_type = static_cast<ibv_event_type>(type);
  if (type == IBV_EVENT_DEVICE_FATAL) {
    device.broadcast(event);
    device.failAllQps();  // the device stopped: nothing it held completes
    return 0;
  }
  if (isPortEvent(type)) {
    if (element != Device::kPort) return EINVAL;
    event.element.port_num = static_cast<int>(element);
    if (type == IBV_EVENT_PORT_ERR) device.setPortDown(true);
    if (type == IBV_EVENT_PORT_ACTIVE) device.setPortDown(false);
    device.broadcast(event);
    return 0;
  }
  Qp* qp = device.findQp(element);
  if (qp == nullptr) return ENOENT;
  if (type == IBV_EVENT_CQ_ERR) {
    raiseCqEvent(qp->sendCq, IBV_EVENT_CQ_ERR);
    return 0;
  }
  if (!isQpEvent(type)) return EINVAL;
  raiseQpEvent(qp, event.event_type);
  // The fatal QP events say the QP is in the error state; make it so.
  if (type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR ||
      type == IBV_EVENT_QP_ACCESS_ERR) {
    enterError(qp);
  }
  return 0;
}

}  // namespace

void raiseQpEvent(Qp* qp, ibv_event_type type) {
  ibv_async_event event{};
  event.event_type = type;
  event.element.qp = &qp->qp;
  queueOn(qp->qp.context, event);
}

void raiseCqEvent(Cq* cq, ibv_event_type type) {
  ibv_async_event event{};
  event.event_type = type;
  event.element.cq = &cq->cq;
  queueOn(cq->cq.context, event);
}

}  // namespace softverbs

using namespace softverbs;

extern "C" {

// Test-only (test_hooks.h): what software cannot cause, a device failing or
// a link going down, and events on a given QP or CQ.
SOFTVERBS_EXPORT int softverbs_raise_async_event(int device, int type, uint32_t element) {
  Device* d = Device::acquireOpen(device);
  if (d == nullptr) return ENODEV;
  int rc = 0;
  {
    std::lock_guard<std::mutex> lock(d->mutex);
    rc = raiseOn(*d, type, element);
  }
  Device::release(d);
  return rc;
}

}  // extern "C"
