// sobas_path.cc — `sobas path HOST[:PORT]`: measures the path to HOST (RTT; with a sobasd there, C' and forward loss) and advises buffers, sysctls, streams and SOBAS's S.
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clocks.h"
#include "path_advice.h"
extern "C" {
#include "probe_est.h"
#include "sobas/probe.h"
}

namespace {

constexpr int kProbes = 30;               // 100-byte probes, 10 ms apart: RTT and forward loss
constexpr int kTrains = 5, kTrainLen = 32; // the paper's 5 trains of 32: no flow of its own for them to burst into
constexpr int64_t kListenNs = 1500000000;  // replies after the last probe was sent
constexpr int kConnectMs = 3000;
constexpr int64_t kDownloadNs = 3000000000;  // --http: how long the download runs
constexpr uint64_t kDownloadMin = 1 << 20;    // --http: fewer bytes than this say nothing of the path

struct Options {
  std::string host, port = "22";
  uint16_t probe_port = SOBAS_PROBE_DEFAULT_PORT;
  bool json = false;
  std::string http_path;  // --http: what to download when no sobasd gives C'
};

[[noreturn]] void usage_error(const std::string &why) {
  std::fprintf(stderr, "sobas path: %s; see sobas path --help\n", why.c_str());
  std::exit(2);
}

void usage() {
  std::printf(
      "usage: sobas path [--json] [--probe-port N] [--http PATH] HOST[:PORT]\n"
      "Measures the path to HOST and says what a bulk TCP transfer over it needs: the RTT (from a TCP\n"
      "connection to PORT, default 22, which sobasd verifies before it answers); with a sobasd on HOST,\n"
      "the capacity C' from packet trains and the forward loss; then the BDP, Tierney's buffer and whether\n"
      "this host's sysctls allow it (with the lines that would), GridFTP's parallel stream count for the\n"
      "buffer this host gives, and the largest S SOBAS would hold.\n"
      "  --json          one JSON object instead of text\n"
      "  --probe-port N  sobasd's UDP port on HOST (default 9521)\n"
      "  --http PATH     when no sobasd answers, download PATH from the HTTP server on PORT for 3 s and\n"
      "                  take its rate as a lower bound on the capacity\n"
      "  -V, --version   print the version\n"
      "Exit status: 0 measured; 1 HOST did not answer on PORT; 2 bad usage or HOST does not resolve.\n");
}

// HOST[:PORT] into o.host and o.port: [v6]:port, host:port, or a bare host (a bare IPv6 address has
// several colons).
void host_port(const std::string &a, Options &o) {
  if (a[0] == '[') {
    size_t close = a.find(']');
    if (close == std::string::npos) usage_error("unclosed '[' in '" + a + "'");
    o.host = a.substr(1, close - 1);
    if (close + 1 < a.size()) {
      if (a[close + 1] != ':') usage_error("expected :PORT after ']' in '" + a + "'");
      o.port = a.substr(close + 2);
    }
  } else if (std::count(a.begin(), a.end(), ':') == 1) {
    o.host = a.substr(0, a.find(':'));
    o.port = a.substr(a.find(':') + 1);
  } else {
    o.host = a;
  }
  char *end;
  long p = std::strtol(o.port.c_str(), &end, 10);
  if (o.host.empty() || *end || p < 1 || p > 65535) usage_error("bad HOST[:PORT] '" + a + "'");
}

Options parse(int argc, char **argv) {
  Options o;
  enum { O_JSON = 256, O_PROBE_PORT, O_HTTP };
  static const option longs[] = {{"help", no_argument, nullptr, 'h'},
                                 {"version", no_argument, nullptr, 'V'},
                                 {"json", no_argument, nullptr, O_JSON},
                                 {"probe-port", required_argument, nullptr, O_PROBE_PORT},
                                 {"http", required_argument, nullptr, O_HTTP},
                                 {nullptr, 0, nullptr, 0}};
  opterr = 0;  // our own messages, which point at --help
  for (int c; (c = getopt_long(argc, argv, ":hV", longs, nullptr)) != -1;) {
    switch (c) {
      case 'h': usage(); std::exit(0);
      case 'V': std::printf("sobas-path %s\n", SOBAS_VERSION); std::exit(0);
      case O_JSON: o.json = true; break;
      case O_PROBE_PORT: {
        char *end;
        long p = std::strtol(optarg, &end, 10);
        if (!*optarg || *end || p < 1 || p > 65535) usage_error(std::string("bad probe port '") + optarg + "'");
        o.probe_port = uint16_t(p);
        break;
      }
      case O_HTTP:
        if (optarg[0] != '/') usage_error("--http needs a path starting with /");
        o.http_path = optarg;
        break;
      case ':': usage_error(std::string(argv[optind - 1]) + " needs a value");
      default:
        usage_error("unknown option '" + (optopt > 0 && optopt < 128 ? std::string("-") + char(optopt)
                                                                     : std::string(argv[optind - 1])) + "'");
    }
  }
  if (optind == argc) usage_error("no HOST given");
  if (argc - optind > 1) usage_error("one HOST only");
  host_port(argv[optind], o);
  return o;
}

using sobas::mono_ns;
using sobas::real_ns;

// The TCP connection sobasd verifies, and the RTT of its handshake.
struct Connection {
  int fd = -1;
  sockaddr_storage local{}, peer{};
  uint32_t rtt_us = 0;
};

// One handshake to addr: the connected socket (nonblocking) and its RTT, or -errno.
int handshake(const addrinfo *ai, uint32_t &rtt_us) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  int64_t t0 = mono_ns();
  int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
  pollfd p{fd, POLLOUT, 0};
  int err = r == 0 ? 0 : errno;
  if (r != 0 && errno == EINPROGRESS) {
    err = poll(&p, 1, kConnectMs) == 1 ? 0 : ETIMEDOUT;
    socklen_t len = sizeof err;
    if (!err) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  }
  if (err != 0) {
    close(fd);
    return -err;
  }
  rtt_us = uint32_t((mono_ns() - t0) / 1000);
  tcp_info ti{};
  socklen_t tl = sizeof ti;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && ti.tcpi_rtt) rtt_us = ti.tcpi_rtt;
  return fd;
}

// The least RTT of kHandshakes handshakes stands for the path's: one is a single sample, which a host
// that stalls for 1-40 ms at times inflates (a CI run of test/wan/probe.bats read 50.9 ms on the 40 ms
// path). The extra connections are opened and closed at once, before any byte is sent.
constexpr int kHandshakes = 3;

std::string connect_any(const Options &o, Connection &c) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  int g = getaddrinfo(o.host.c_str(), o.port.c_str(), &hints, &res);
  if (g != 0) {
    std::fprintf(stderr, "sobas path: cannot resolve '%s': %s\n", o.host.c_str(), gai_strerror(g));
    std::exit(2);
  }
  std::string why = "no address";
  for (addrinfo *ai = res; ai; ai = ai->ai_next) {
    int fd = handshake(ai, c.rtt_us);
    if (fd < 0) {
      why = std::strerror(-fd);
      continue;
    }
    c.fd = fd;
    socklen_t l = sizeof c.local;
    getsockname(fd, reinterpret_cast<sockaddr *>(&c.local), &l);
    std::memcpy(&c.peer, ai->ai_addr, ai->ai_addrlen);
    for (int i = 1; i < kHandshakes; i++) {
      uint32_t rtt = 0;
      int more = handshake(ai, rtt);
      if (more < 0) break;
      close(more);
      if (rtt < c.rtt_us) c.rtt_us = rtt;
    }
    freeaddrinfo(res);
    return "";
  }
  freeaddrinfo(res);
  return why;
}

// The wire's view of an endpoint: family, 16 address bytes (IPv4 in the first 4), port.
uint8_t wire(const sockaddr_storage &s, uint8_t addr[16], uint16_t &port) {
  std::memset(addr, 0, 16);
  if (s.ss_family == AF_INET) {
    auto *a = reinterpret_cast<const sockaddr_in *>(&s);
    std::memcpy(addr, &a->sin_addr, 4);
    port = ntohs(a->sin_port);
    return 4;
  }
  auto *a = reinterpret_cast<const sockaddr_in6 *>(&s);
  std::memcpy(addr, &a->sin6_addr, 16);
  port = ntohs(a->sin6_port);
  return 6;
}

// What the probe learned; echoes == 0: no sobasd answered.
struct ProbeResult {
  uint32_t sent = 0, echoes = 0, rtt_min_us = 0, rtt_avg_us = 0;
  uint64_t lost = 0, cap_bps = 0;
  uint32_t trains_used = 0;
};

ProbeResult probe(const Options &o, const Connection &c) {
  ProbeResult r;
  sobas_probe_msg base{};
  base.flow.family = wire(c.local, base.flow.rcv_addr, base.flow.rcv_port);
  wire(c.peer, base.flow.snd_addr, base.flow.snd_port);
  base.nonce = std::random_device{}();
  int fd = socket(c.peer.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return r;
  int one = 1, rcvbuf = 1 << 20;
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_storage to = c.peer;
  if (to.ss_family == AF_INET) reinterpret_cast<sockaddr_in *>(&to)->sin_port = htons(o.probe_port);
  else reinterpret_cast<sockaddr_in6 *>(&to)->sin6_port = htons(o.probe_port);
  // Probes leave from the address the TCP connection uses: sobasd checks that they are its flow's.
  sockaddr_storage from = c.local;
  if (from.ss_family == AF_INET) reinterpret_cast<sockaddr_in *>(&from)->sin_port = 0;
  else reinterpret_cast<sockaddr_in6 *>(&from)->sin6_port = 0;
  socklen_t alen = from.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (bind(fd, reinterpret_cast<sockaddr *>(&from), alen) != 0 ||
      connect(fd, reinterpret_cast<sockaddr *>(&to), alen) != 0) {
    close(fd);
    return r;
  }
  uint16_t size = base.flow.family == 6 ? 1452 : SOBAS_TRAIN_MAX_SIZE;
  sobas_echo_est est{};
  std::vector<std::vector<int64_t>> arrivals(kTrains, std::vector<int64_t>(kTrainLen, 0));
  uint16_t train_count = 0;
  auto send = [&](sobas_probe_msg m) {
    uint8_t buf[SOBAS_PROBE_LEN];
    int n = sobas_probe_encode(&m, buf, sizeof buf);
    if (n > 0) ::send(fd, buf, size_t(n), MSG_NOSIGNAL);
  };
  int64_t next = mono_ns(), end = next + kProbes * 10000000LL + kListenNs;
  while (mono_ns() < end) {
    int64_t now = mono_ns();
    if (r.sent < kProbes && now >= next) {
      sobas_probe_msg m = base;
      m.type = SOBAS_MSG_PROBE;
      m.seq = r.sent++;
      m.ts = uint64_t(real_ns());
      send(m);
      if (r.sent == 3) {  // trains once sobasd has seen the flow (its first probes verify it)
        sobas_probe_msg t = base;
        t.type = SOBAS_MSG_TRAIN_REQ;
        t.seq = 1;
        t.trains = kTrains;
        t.train_len = kTrainLen;
        t.pkt_size = size;
        send(t);
      }
      next += 10000000;
    }
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 5);
    for (;;) {
      uint8_t buf[2048];
      union {
        cmsghdr align;
        char b[CMSG_SPACE(sizeof(timespec))];
      } ctl;
      iovec iov{buf, sizeof buf};
      msghdr mh{};
      mh.msg_iov = &iov;
      mh.msg_iovlen = 1;
      mh.msg_control = ctl.b;
      mh.msg_controllen = sizeof ctl.b;
      ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
      if (n < 0) break;
      int64_t rx = 0;
      for (cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
          timespec ts;
          std::memcpy(&ts, CMSG_DATA(cm), sizeof ts);
          rx = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
        }
      if (!rx) rx = real_ns();
      sobas_probe_msg m;
      if (sobas_probe_decode(buf, size_t(n), &m) != SOBAS_PROBE_OK || m.nonce != base.nonce) continue;
      if (m.type == SOBAS_MSG_ECHO && m.seq < r.sent && rx > int64_t(m.ts)) {
        sobas_echo_add(&est, m.rsp_seq, uint32_t((rx - int64_t(m.ts)) / 1000));
      } else if (m.type == SOBAS_MSG_TRAIN && m.trains < kTrains && m.train_len < kTrainLen) {
        arrivals[m.trains][m.train_len] = rx;
        train_count = m.count;
      }
    }
  }
  close(fd);
  sobas_echo_window w;
  sobas_echo_take(&est, &w);
  r.echoes = uint32_t(w.received_total);
  r.rtt_min_us = w.rtt_min_us;
  r.rtt_avg_us = w.rtt_avg_us;
  r.lost = w.lost_total;
  if (train_count >= 2) {
    uint64_t rates[kTrains];
    uint32_t ip = sobas_train_ip_bytes(size, base.flow.family);
    for (int t = 0; t < kTrains; t++) {
      rates[t] = sobas_train_rate_bps(arrivals[t].data(), std::min<uint32_t>(train_count, kTrainLen), ip);
      r.trains_used += rates[t] != 0;
    }
    r.cap_bps = sobas_capacity_bps(rates, kTrains, 3);
  }
  return r;
}

uint64_t read_u64(const char *path, int field = 0) {
  std::ifstream f(path);
  uint64_t v = 0;
  for (int i = 0; i <= field && (f >> v); i++) {
  }
  return f ? v : 0;
}

std::string human_bytes(uint64_t b) {
  char s[32];
  if (b >= (1u << 20)) std::snprintf(s, sizeof s, "%.1f MiB", double(b) / (1 << 20));
  else std::snprintf(s, sizeof s, "%.0f KiB", double(b) / 1024);
  return s;
}

// --http: one TCP flow's rate over the verified connection, measured over the download's second half
// (past slow start). A lower bound on the capacity: the flow's window may still be growing, and cross
// traffic takes its share.
struct Download {
  uint64_t bytes = 0, rate_bps = 0;
  std::string error;
};

Download http_download(const Options &o, int fd) {
  Download d;
  std::string req = "GET " + o.http_path + " HTTP/1.1\r\nHost: " + o.host + "\r\nConnection: close\r\n\r\n";
  if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) != ssize_t(req.size())) {
    d.error = std::strerror(errno);
    return d;
  }
  std::vector<char> buf(1 << 16);
  std::vector<std::pair<int64_t, uint64_t>> seen;  // (time, bytes so far) at each read
  int64_t t0 = mono_ns(), end = t0 + kDownloadNs;
  for (int64_t now = t0; now < end; now = mono_ns()) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, int((end - now) / 1000000) + 1) <= 0) continue;
    ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) break;
    d.bytes += uint64_t(n);
    seen.emplace_back(mono_ns(), d.bytes);
  }
  if (d.bytes < kDownloadMin || seen.size() < 2) {
    d.error = "only " + std::to_string(d.bytes) + " bytes came (at least 1 MiB is needed)";
    return d;
  }
  int64_t half = seen.front().first + (seen.back().first - seen.front().first) / 2;
  auto mid = std::find_if(seen.begin(), seen.end(), [&](const auto &x) { return x.first >= half; });
  double secs = double(seen.back().first - mid->first) / 1e9;
  if (secs > 0) d.rate_bps = uint64_t(double(seen.back().second - mid->second) * 8 / secs);
  return d;
}

}  // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  Connection c;
  std::string why = connect_any(o, c);
  if (c.fd < 0) {
    std::fprintf(stderr, "sobas path: %s does not answer on TCP port %s: %s\n", o.host.c_str(), o.port.c_str(),
                 why.c_str());
    return 1;
  }
  ProbeResult pr = probe(o, c);
  Download dl;
  if (!pr.cap_bps && !o.http_path.empty()) dl = http_download(o, c.fd);
  close(c.fd);
  sobas::PathFacts f;
  f.rtt_us = pr.echoes ? pr.rtt_min_us : c.rtt_us;
  f.cap_bps = pr.cap_bps ? pr.cap_bps : dl.rate_bps;
  const char *cap_from = pr.cap_bps ? "sobasd" : dl.rate_bps ? "http" : "none";
  f.rmem_max = read_u64("/proc/sys/net/core/rmem_max");
  f.wmem_max = read_u64("/proc/sys/net/core/wmem_max");
  for (int i = 0; i < 3; i++) {
    f.tcp_rmem[i] = read_u64("/proc/sys/net/ipv4/tcp_rmem", i);
    f.tcp_wmem[i] = read_u64("/proc/sys/net/ipv4/tcp_wmem", i);
  }
  sobas::PathAdvice a = sobas::advise(f);
  const char *rtt_from = pr.echoes ? "sobasd's echoes" : "the TCP handshake";
  if (o.json) {
    nlohmann::ordered_json j;
    j["host"] = o.host;
    j["port"] = std::stoi(o.port);
    j["rtt_us"] = f.rtt_us;
    j["rtt_from"] = rtt_from;
    j["sobasd"] = pr.echoes > 0;
    j["capacity_bps"] = f.cap_bps;
    j["capacity_from"] = cap_from;
    j["http_bytes"] = dl.bytes;
    j["trains"] = pr.trains_used;
    j["probes"] = pr.sent;
    j["echoes"] = pr.echoes;
    j["forward_lost"] = pr.lost;
    j["bdp_bytes"] = a.bdp_bytes;
    j["buffer_bytes"] = a.buffer_bytes;
    j["receive_ok"] = a.bdp_bytes ? nlohmann::ordered_json(a.rcv_ok) : nullptr;  // unknown without a BDP
    j["send_ok"] = a.bdp_bytes ? nlohmann::ordered_json(a.snd_ok) : nullptr;
    j["sysctl"] = a.sysctl;
    j["host_buffer_bytes"] = a.host_buffer_bytes;
    j["gridftp_streams"] = std::round(a.gridftp_streams * 10) / 10;
    j["sobas_max_s_bytes"] = a.sobas_max_s;
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("path to %s (TCP port %s)\n", o.host.c_str(), o.port.c_str());
  if (f.rtt_us >= 1000) std::printf("  RTT          %.1f ms (from %s)\n", f.rtt_us / 1000.0, rtt_from);
  else std::printf("  RTT          %u us (from %s)\n", f.rtt_us, rtt_from);
  if (pr.echoes) {
    std::printf("  forward loss %" PRIu64 " of %u probes\n", pr.lost, pr.sent);
    if (pr.cap_bps)
      std::printf("  capacity C'  %.1f Mb/s (%u of %d packet trains usable)\n", pr.cap_bps / 1e6, pr.trains_used,
                  kTrains);
    else
      std::printf("  capacity C'  unknown: too few packet trains came back (%u of %d usable)\n", pr.trains_used,
                  kTrains);
  } else {
    std::printf("  capacity C'  unknown: no sobasd answered on UDP port %u (run sobasd on %s for C' and loss)\n",
                o.probe_port, o.host.c_str());
  }
  if (dl.rate_bps)
    std::printf("  throughput   %.1f Mb/s over the second half of a 3 s download of %s (%s): a lower bound on\n"
                "               the capacity, used below in its place\n",
                dl.rate_bps / 1e6, o.http_path.c_str(), human_bytes(dl.bytes).c_str());
  else if (!o.http_path.empty() && !pr.cap_bps)
    std::printf("  throughput   unknown: the download of %s failed: %s\n", o.http_path.c_str(), dl.error.c_str());
  if (a.bdp_bytes) {
    std::printf("  BDP          %s (%s x RTT)\n", human_bytes(a.bdp_bytes).c_str(), pr.cap_bps ? "C'" : "throughput");
    std::printf("  buffer       %s per socket (Tierney: bandwidth x RTT, doubled: Linux gives TCP about half of a\n"
                "               buffer as window); this host %s it for receiving and %s it for sending\n",
                human_bytes(a.buffer_bytes).c_str(), a.rcv_ok ? "allows" : "does NOT allow",
                a.snd_ok ? "allows" : "does NOT allow");
    if (!a.sysctl.empty()) {
      std::printf("  to allow it, as root:\n");
      for (const auto &l : a.sysctl) std::printf("    sysctl -w '%s'\n", l.c_str());
      std::printf("  or for good, in /etc/sysctl.d/90-sobas.conf:\n");
      for (const auto &l : a.sysctl) std::printf("    %s\n", l.c_str());
    }
    std::printf("  the peer     needs the same %s send buffer for downloads (its net.ipv4.tcp_wmem), receive\n"
                "               buffer for uploads\n", human_bytes(a.buffer_bytes).c_str());
    std::printf("  SOBAS        holds S = R x T: at most %s (%s x T) on a path it has alone, less beside cross\n"
                "               traffic (R is measured during the transfer)\n", human_bytes(a.sobas_max_s).c_str(),
                pr.cap_bps ? "C'" : "throughput");
  } else {
    std::printf("  BDP          unknown without C'\n");
  }
  if (a.gridftp_streams > 0)
    std::printf("  GridFTP      %.1f parallel streams for this host's %s buffer: Po = 155 x RTT_ms / Bo_KB^0.86,\n"
                "               fitted at 1 Gb/s and 5-50 ms; a single SOBAS stream cannot exceed its window (about\n"
                "               half the buffer)\n",
                a.gridftp_streams, human_bytes(a.host_buffer_bytes).c_str());
  return 0;
}
