// path_advice.h — what `sobas path` advises from a path's RTT and capacity and this host's limits (pure, unit tested).
#ifndef SOBAS_PATH_ADVICE_H
#define SOBAS_PATH_ADVICE_H

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace sobas {

// What was measured or read; 0 = not known.
struct PathFacts {
  uint32_t rtt_us = 0;       // the path's base RTT
  uint64_t cap_bps = 0;      // C' from packet trains, or a download's rate (a lower bound); 0: unknown
  uint64_t rmem_max = 0;     // net.core.rmem_max: the most SO_RCVBUF may ask for
  uint64_t wmem_max = 0;     // net.core.wmem_max
  uint64_t tcp_rmem[3] = {};  // net.ipv4.tcp_rmem: min, default, max (receive autotuning's ceiling)
  uint64_t tcp_wmem[3] = {};  // net.ipv4.tcp_wmem
};

struct PathAdvice {
  uint64_t bdp_bytes = 0;       // C'·RTT (0: C' unknown)
  uint64_t buffer_bytes = 0;    // Tierney's buffer for it, as Linux must be asked for it
  bool rcv_ok = false, snd_ok = false;  // this host's limits allow that buffer (receiving, sending)
  std::vector<std::string> sysctl;      // the `sysctl -w` lines that would allow it (empty: none needed)
  uint64_t host_buffer_bytes = 0;       // the largest receive buffer autotuning gives a socket now
  double gridftp_streams = 0;           // GridFTP's optimal parallel streams for its window (0: unknown)
  uint64_t sobas_max_s = 0;             // the largest S SOBAS would hold: C'·T, on a path it has alone
};

// Linux gives TCP about half of a socket buffer as window (the rest is per-packet overhead:
// tcp_adv_win_scale, and since 6.x the measured truesize ratio), so a window of B needs a buffer of
// 2·B, the factor Tierney's guide also recommends.
constexpr double kLinuxBufferPerWindow = 2.0;

// GridFTP's regression (seed 003, eq. 4): at 1 Gb/s the best number of parallel streams for a
// per-stream buffer Bo (KB) and an RTT (ms) is Po = 155·RTT / Bo^0.86. Fitted at 1 Gb/s and 5-50 ms.
// Bo is the socket buffer as set, not the window Linux offers in it (about half): on the emulated
// 1 Gb/s path with buffers capped at 512 KB the optimum measured 3 and 4 streams at 5 and 10 ms
// (results/streams), the formula with the buffer 3.6 and 7.3, with the window 6.6 and 13.2.
inline double gridftp_streams(double rtt_ms, double buffer_kb) {
  if (rtt_ms <= 0 || buffer_kb <= 0) return 0;
  return 155.0 * rtt_ms / std::pow(buffer_kb, 0.86);
}

// A byte count rounded up to whole MiB: the values a person writes into sysctl.d.
inline uint64_t round_up_mib(uint64_t b) { return (b + (1u << 20) - 1) / (1u << 20) * (1u << 20); }

inline PathAdvice advise(const PathFacts &f) {
  PathAdvice a;
  a.host_buffer_bytes = f.tcp_rmem[2];
  a.gridftp_streams = gridftp_streams(f.rtt_us / 1000.0, double(f.tcp_rmem[2]) / 1024.0);
  if (!f.cap_bps || !f.rtt_us) return a;
  a.bdp_bytes = uint64_t(double(f.cap_bps) / 8.0 * f.rtt_us / 1e6);
  a.sobas_max_s = a.bdp_bytes;
  a.buffer_bytes = round_up_mib(uint64_t(kLinuxBufferPerWindow * double(a.bdp_bytes)));
  // Autotuning grows a socket to tcp_*mem[2]; an application's own SO_*BUF is capped at *mem_max.
  a.rcv_ok = f.tcp_rmem[2] >= a.buffer_bytes && f.rmem_max >= a.buffer_bytes;
  a.snd_ok = f.tcp_wmem[2] >= a.buffer_bytes && f.wmem_max >= a.buffer_bytes;
  std::string b = std::to_string(a.buffer_bytes);
  auto mem = [&](const char *key, const uint64_t v[3]) {
    return std::string(key) + "=" + std::to_string(v[0]) + " " + std::to_string(v[1]) + " " + b;
  };
  if (f.rmem_max < a.buffer_bytes) a.sysctl.push_back("net.core.rmem_max=" + b);
  if (f.wmem_max < a.buffer_bytes) a.sysctl.push_back("net.core.wmem_max=" + b);
  if (f.tcp_rmem[2] < a.buffer_bytes) a.sysctl.push_back(mem("net.ipv4.tcp_rmem", f.tcp_rmem));
  if (f.tcp_wmem[2] < a.buffer_bytes) a.sysctl.push_back(mem("net.ipv4.tcp_wmem", f.tcp_wmem));
  return a;
}

}  // namespace sobas
#endif
