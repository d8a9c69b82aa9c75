// clocks.h — the two clocks the controller programs read, in nanoseconds.
#ifndef SOBAS_CLOCKS_H
#define SOBAS_CLOCKS_H

#include <cstdint>
#include <ctime>

namespace sobas {

inline int64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
inline int64_t mono_ns() { return clock_ns(CLOCK_MONOTONIC); }
inline int64_t real_ns() { return clock_ns(CLOCK_REALTIME); }  // the wire's and the ring's timestamps

}  // namespace sobas
#endif
