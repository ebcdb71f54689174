/* SPDX-License-Identifier: Apache-2.0 */
/* softverbs: hooks for tests, beyond libibverbs' API. A test that links
   softverbs calls them directly; one that reaches softverbs through a
   consumer's dlopen (sdk-ib) finds them with
   dlsym(dlopen(path, RTLD_NOW | RTLD_NOLOAD), SOFTVERBS_RAISE_ASYNC_EVENT). */
#ifndef SOFTVERBS_TEST_HOOKS_H
#define SOFTVERBS_TEST_HOOKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOFTVERBS_RAISE_ASYNC_EVENT "softverbs_raise_async_event"

/* Raises async event `type` (enum ibv_event_type) on device `device` of the
   calling process, as the hardware would. IBV_EVENT_DEVICE_FATAL reaches
   every context of the device and moves all its QPs to the error state.
   Port events (`element`: the port number, 1) reach every context;
   IBV_EVENT_PORT_ERR reports the port DOWN until IBV_EVENT_PORT_ACTIVE.
   QP events (`element`: the QP number) reach the QP's context, and the
   fatal ones (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR) put the QP in the error
   state. IBV_EVENT_CQ_ERR names the send CQ of QP `element`.
   Returns 0, ENODEV (the device is not open in this process), ENOENT (no
   such QP) or EINVAL (an event or element softverbs does not raise). */
int softverbs_raise_async_event(int device, int type, uint32_t element);
typedef int (*softverbs_raise_async_event_fn)(int device, int type, uint32_t element);

#ifdef __cplusplus
}
#endif

#endif /* SOFTVERBS_TEST_HOOKS_H */
