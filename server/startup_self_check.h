// exactqd --self_check: before the server takes traffic, the golden pairs of
// engine/golden are scored on the CPU and on every GPU of the pool, and each output's
// bits compared with the committed golden values. A GPU that differs (or fails) is
// reported to the pool as poisoned, so it is lost for good and takes no stream, with
// every difference logged; a new GPU type, driver or build thus proves it returns the
// reference bits before it serves.
#ifndef EXACTQ_SERVER_STARTUP_SELF_CHECK_H_
#define EXACTQ_SERVER_STARTUP_SELF_CHECK_H_

#include "engine/runtime/device_pool.h"

namespace exactq::server {

// False when the CPU itself differs: this build does not return the reference bits,
// and the server must not serve.
bool StartupSelfCheck(DevicePool* pool);

}  // namespace exactq::server

#endif  // EXACTQ_SERVER_STARTUP_SELF_CHECK_H_
