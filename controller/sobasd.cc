// sobasd.cc — the side-probe responder a data-sending host runs: echoes verified receivers' probes and sends them packet trains, tells them when the flow's own sender steers it, and answers nobody else.
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sobas/probe.h"
#include "sobas/steered.h"

namespace {

// Under systemd, stderr is a stream into the journal and JOURNAL_STREAM names it (device:inode): each
// line then starts with its syslog priority, "<3>" to "<7>", which journald files and strips
// (sd-daemon(3)). Anywhere else the lines stay as a person reads them.
bool g_journal = [] {
  const char *js = std::getenv("JOURNAL_STREAM");
  struct stat st;
  unsigned long long dev, ino;
  return js && std::sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 && dev == st.st_dev &&
         ino == st.st_ino;
}();

// One log line on stderr, "sobasd: " and the message, at a syslog priority (LOG_ERR ... LOG_INFO).
__attribute__((format(printf, 2, 3))) void say(int priority, const char *fmt, ...) {
  char b[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  if (g_journal) std::fprintf(stderr, "<%d>sobasd: %s\n", priority, b);
  else std::fprintf(stderr, "sobasd: %s\n", b);
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Options {
  uint16_t port = SOBAS_PROBE_DEFAULT_PORT;
  std::vector<std::string> listen;     // empty: 0.0.0.0 and ::
  std::string user = "nobody";         // whom to become after binding, when started as root
  unsigned trains = 8, train_len = 32; // the most a request gets: the shim asks 8 of 16, sobas path 5 of 32
  unsigned train_gap_ms = 10;          // between trains: a shallow buffer drains before the next
  unsigned train_interval_s = 5;       // per flow: at most one train set this often
  unsigned train_peer_per_min = 30;    // per peer address, over all its flows
  unsigned echo_rate = 200;            // per flow, echoes/s (the probe sends 100/s)
  unsigned verify_rate = 200;          // netlink lookups/s over all peers
  unsigned verify_cache_ms = 3000;     // how long a lookup's answer (yes or no) is trusted
  unsigned max_flows = 4096;
  std::string stats;                   // JSON counters written on SIGUSR1 and at exit
};

// What sobasd did with each datagram; the refusal classes are also logged (rate-limited).
struct Counters {
  uint64_t rx = 0, echoes = 0, train_requests = 0, train_sets = 0, train_packets = 0;
  uint64_t malformed[SOBAS_PROBE_N_ERRORS] = {};
  uint64_t unexpected_type = 0, not_local = 0, unverified = 0, verify_budget = 0, echo_limited = 0,
           train_limited = 0, table_full = 0, steered_full = 0, netlink_queries = 0, netlink_errors = 0, cache_hits = 0;
  uint64_t leads = 0, lead_refused = 0, early_leads = 0, trains_withheld = 0;
};

// A token bucket: `rate` tokens per second, at most `burst` saved.
struct Bucket {
  double tokens = 0;
  int64_t last = 0;
  bool take(double rate, double burst, int64_t now) {
    if (last == 0) tokens = burst;
    else tokens = std::min(burst, tokens + rate * double(now - last) / 1e9);
    last = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
};

struct Peer {
  sockaddr_storage addr{};
  socklen_t len = 0;
  in6_pktinfo local6{};  // the address the request came to: replies leave from it
  in_pktinfo local4{};
};

std::string addr_text(const sockaddr_storage &a) {
  char ip[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET) {
    auto *in = reinterpret_cast<const sockaddr_in *>(&a);
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
    return std::string(ip) + ":" + std::to_string(ntohs(in->sin_port));
  }
  auto *in6 = reinterpret_cast<const sockaddr_in6 *>(&a);
  inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
  return "[" + std::string(ip) + "]:" + std::to_string(ntohs(in6->sin6_port));
}

// The datagram's source as the wire writes addresses (family 4 or 6, 16 bytes).
bool source_of(const sockaddr_storage &a, uint8_t &family, uint8_t out[16]) {
  std::memset(out, 0, 16);
  static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (a.ss_family == AF_INET) {
    std::memcpy(out, &reinterpret_cast<const sockaddr_in *>(&a)->sin_addr, 4);
    family = 4;
    return true;
  }
  if (a.ss_family == AF_INET6) {
    auto *b = reinterpret_cast<const sockaddr_in6 *>(&a)->sin6_addr.s6_addr;
    if (std::memcmp(b, mapped, 12) == 0) {
      std::memcpy(out, b + 12, 4);
      family = 4;
    } else {
      std::memcpy(out, b, 16);
      family = 6;
    }
    return true;
  }
  return false;
}

// Is there an ESTABLISHED TCP connection local:lport <-> peer:pport on this host? NETLINK_SOCK_DIAG's
// exact lookup (what `ss` uses for one socket), no privilege needed.
class SockDiag {
 public:
  SockDiag() : fd_(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) {
    timeval tv{0, 200000};  // a kernel answer is immediate; never hang the loop on it
    if (fd_ >= 0) setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~SockDiag() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  // 1 established, 0 no such connection, -1 the lookup failed. *uid: the socket's owner, when 1.
  int established(uint8_t family, const uint8_t local[16], uint16_t lport, const uint8_t peer[16], uint16_t pport,
                  uint32_t *uid) {
    struct {
      nlmsghdr nlh;
      inet_diag_req_v2 r;
    } req{};
    req.nlh.nlmsg_len = sizeof req;
    req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nlh.nlmsg_flags = NLM_F_REQUEST;
    req.nlh.nlmsg_seq = ++seq_;
    req.r.sdiag_family = family == 6 ? AF_INET6 : AF_INET;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = 1u << TCP_ESTABLISHED;
    req.r.id.idiag_sport = htons(lport);
    req.r.id.idiag_dport = htons(pport);
    std::memcpy(req.r.id.idiag_src, local, family == 6 ? 16 : 4);
    std::memcpy(req.r.id.idiag_dst, peer, family == 6 ? 16 : 4);
    req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (sendto(fd_, &req, sizeof req, 0, reinterpret_cast<sockaddr *>(&kernel), sizeof kernel) < 0) return -1;
    alignas(nlmsghdr) char buf[8192];
    for (;;) {
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n < 0) return -1;
      for (auto *h = reinterpret_cast<nlmsghdr *>(buf); NLMSG_OK(h, size_t(n)); h = NLMSG_NEXT(h, n)) {
        if (h->nlmsg_seq != seq_) continue;  // a late answer to a lookup that timed out
        if (h->nlmsg_type == NLMSG_ERROR) {
          auto *e = static_cast<nlmsgerr *>(NLMSG_DATA(h));
          return e->error == -ENOENT ? 0 : -1;
        }
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) return -1;
        auto *m = static_cast<inet_diag_msg *>(NLMSG_DATA(h));
        // The exact lookup falls back to a listener on the port: only a connection to this peer counts.
        if (m->idiag_state != TCP_ESTABLISHED || m->id.idiag_dport != htons(pport) ||
            m->id.idiag_sport != htons(lport))
          return 0;
        if (!same_peer(m, family, peer)) return 0;
        *uid = m->idiag_uid;
        return 1;
      }
    }
  }

 private:
  static bool same_peer(const inet_diag_msg *m, uint8_t family, const uint8_t peer[16]) {
    const uint8_t *d = reinterpret_cast<const uint8_t *>(m->id.idiag_dst);
    if (family == 6) return std::memcmp(d, peer, 16) == 0;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (m->idiag_family == AF_INET6)  // a dual-stack socket: the peer as ::ffff:a.b.c.d
      return std::memcmp(d, mapped, 12) == 0 && std::memcmp(d + 12, peer, 4) == 0;
    return std::memcmp(d, peer, 4) == 0;
  }
  int fd_;
  uint32_t seq_ = 0;
};

// The steered-flows table (sobas/steered.h) this namespace's preloaded senders read: a verified probe
// marks its flow there, so a sender leaves the flow to its receiver before deciding anything. Without
// it (/dev/shm not writable, another sobasd already publishing here) sobasd still answers: the
// senders then let go once the peer's window holds them, as without sobasd.
//
// Every sender maps the file, and a mapped file that shrinks kills its reader with SIGBUS. So the file
// is never reused or resized: each start unlinks what it finds (a mapping of the old file stays whole)
// and creates a new one, with its pages allocated at once. And it is made before sobasd drops to its
// --user: senders trust only a file no other user can truncate (shim/peer_steers.c).
class SteeredTable {
 public:
  ~SteeredTable() {
    if (!t_) return;
    munmap(t_, sizeof *t_);
    // Only our own file: a sobasd started since may have replaced it. After a drop to --user this
    // fails (root's file in sticky /dev/shm), and the next sobasd or testbed.sh removes it.
    struct stat now, ours;
    if (stat(path_.c_str(), &now) == 0 && fstat(fd_, &ours) == 0 && now.st_ino == ours.st_ino) unlink(path_.c_str());
    close(fd_);  // and with it the lock
  }
  void open() {
    struct stat ns;
    if (stat("/proc/self/ns/net", &ns) != 0) return warn("no /proc/self/ns/net");
    // Under its systemd unit /dev/shm is private (PrivateDevices=): the runtime directory, /run/sobasd,
    // is where the senders look first.
    const char *rd = std::getenv("RUNTIME_DIRECTORY");
    std::string dir = rd && *rd ? std::string(rd).substr(0, std::string(rd).find(':')) : SOBAS_STEERED_DIR;
    path_ = dir + "/" SOBAS_STEERED_PREFIX + std::to_string(ns.st_ino);
    if (published_elsewhere()) return warn((path_ + ": another sobasd publishes it").c_str());
    if (unlink(path_.c_str()) != 0 && errno != ENOENT) return warn((path_ + ": " + std::strerror(errno)).c_str());
    // O_EXCL: a file planted between the unlink and here is not written through either.
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) return warn((path_ + ": " + std::strerror(errno)).c_str());
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) return fail("another sobasd publishes it", false);
    fchmod(fd_, 0644);  // whatever the umask: every sender on the host reads it
    // Allocated now, a full tmpfs fails here instead of as a SIGBUS in sobasd's first write.
    if (int e = posix_fallocate(fd_, 0, sizeof *t_)) return fail(std::strerror(e));
    void *m = mmap(nullptr, sizeof *t_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (m == MAP_FAILED) return fail(std::strerror(errno));
    t_ = static_cast<sobas_steered_table *>(m);
    sobas_steered_init(t_);
    say(LOG_INFO, "publishing steered flows in %s", path_.c_str());
  }
  bool open_ok() const { return t_ != nullptr; }
  // False when the flow's slots are all taken by other live flows.
  bool mark(const sobas_probe_flow &f, int64_t now) { return !t_ || sobas_steered_put(t_, &f, now) == 0; }

 private:
  // Whether a live sobasd holds the file at path_ (its lock); a dead one's file is replaced.
  bool published_elsewhere() const {
    int fd = ::open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
  }
  void warn(const char *why) {
    say(LOG_WARNING, "no steered-flows table (%s): preloaded senders here find their peer's sobas by its window only",
        why);
  }
  // remove: the file is ours to take back (not when another sobasd took it over).
  void fail(const char *why, bool remove = true) {
    warn((path_ + ": " + why).c_str());
    if (remove) unlink(path_.c_str());
    close(fd_);
    fd_ = -1;
  }
  std::string path_;
  int fd_ = -1;
  sobas_steered_table *t_ = nullptr;
};

// What sobasd remembers per claimed flow (keyed by the wire's flow tuple).
struct Flow {
  int64_t verified_until = 0;  // the lookup's answer holds until then
  bool verified = false;
  uint32_t rsp_seq = 0;         // our echo sequence: the receiver finds forward loss in its gaps
  Bucket echo;
  int64_t last_train = 0;
  int64_t last_seen = 0;
  uint32_t owner = 0;       // the TCP socket's owner, as the lookup that verified it found
  int64_t lead_until = 0;  // its sender's sobas steers it: echoes say so until then
  bool trains_withheld = false;  // its first train request came while its sender led
};

// A LEAD for a flow no probe has made us verify yet (or whose answer expired): a preloaded sender sends
// one as soon as its flow is a quarter of the way to bulk, before the receiver's first probe can arrive.
// Kept unchecked until that probe makes us look the connection up, and taken then from the socket's owner
// or root. So the receiver stands down at its first echo, before any trains or window of its own.
struct EarlyLead {
  uint32_t uid = 0;
  int64_t until = 0;
};
// How long an early LEAD waits for the receiver's first probe: a receiver probes a quarter of the way to
// bulk, a round trip or two after its sender got there.
constexpr int64_t kEarlyLeadNs = 2000000000LL;

// A sender's LEAD holds this long. The sender repeats it every 0.5 s while the receiver's probe still
// reaches us (shim/track.c, lead_or_yield): a receiver that stood down stops probing, and the word lapses.
constexpr int64_t kLeadHoldNs = 2000000000LL;

// The abstract unix socket preloaded senders on this host tell "I steer this flow" on (sobas/probe.h,
// LEAD). Abstract: one per network namespace, like the flows it names, and no file to own or clean.
// SO_PASSCRED: every datagram comes with its sender's credentials, checked against the TCP socket's
// owner, so no one can stand down the receivers of another user's flows.
int open_lead_socket() {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, SOBAS_LEAD_SOCKET, sizeof SOBAS_LEAD_SOCKET - 1);
  int one = 1;
  socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + sizeof SOBAS_LEAD_SOCKET);  // NUL + name
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0 ||
      bind(fd, reinterpret_cast<sockaddr *>(&a), len) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

struct TrainJob {
  int fd;
  Peer to;
  sobas_probe_msg msg;  // the train packets' template
  unsigned next = 0, trains = 0;
  int64_t due = 0;
};

std::string addr_key(const sockaddr_storage &a) {
  uint8_t family, b[16];
  source_of(a, family, b);
  return std::string(reinterpret_cast<const char *>(b), 16);
}

std::string flow_key(const sobas_probe_flow &f) {
  return std::string(reinterpret_cast<const char *>(&f), sizeof f);
}

volatile sig_atomic_t g_stop = 0, g_dump = 0;

class Responder {
 public:
  explicit Responder(const Options &o) : o_(o) {}

  int bind_all() {
    std::vector<std::string> addrs = o_.listen;
    bool defaults = addrs.empty();
    if (defaults) addrs = {"0.0.0.0", "::"};
    for (const auto &a : addrs) {
      int fd = open_listener(a);
      if (fd < 0) {
        if (defaults && a == "::") {
          say(LOG_WARNING, "no IPv6 here (%s); answering on IPv4 only", std::strerror(errno));
          continue;
        }
        say(LOG_ERR, "cannot listen on %s port %u: %s", a.c_str(), o_.port, std::strerror(errno));
        return -1;
      }
      fds_.push_back(fd);
    }
    return fds_.empty() ? -1 : 0;
  }

  bool diag_ok() const { return diag_.ok(); }
  void publish_steered() { steered_.open(); }
  // Without the lead socket (another sobasd here has it) senders stand aside as before: the receiver steers.
  void listen_leads() {
    lead_fd_ = open_lead_socket();
    if (lead_fd_ < 0)
      say(LOG_WARNING, "no lead socket (@%s: %s): preloaded senders here leave their flows to sobas receivers",
          SOBAS_LEAD_SOCKET, std::strerror(errno));
  }

  void run() {
    say(LOG_INFO, "answering on UDP port %u (%zu socket%s)", o_.port, fds_.size(), fds_.size() == 1 ? "" : "s");
    sigset_t run_mask;
    sigemptyset(&run_mask);
    while (!g_stop) {
      if (g_dump) {
        g_dump = 0;
        dump();
      }
      int64_t now = now_ns();
      send_due_trains(now);
      housekeeping(now);
      int64_t wait = 1000000000;
      for (const auto &j : jobs_) wait = std::min(wait, std::max<int64_t>(0, j.due - now));
      std::vector<pollfd> p;
      for (int fd : fds_) p.push_back({fd, POLLIN, 0});
      if (lead_fd_ >= 0) p.push_back({lead_fd_, POLLIN, 0});
      timespec ts{wait / 1000000000, wait % 1000000000};
      // Signals are blocked except inside ppoll: a SIGTERM ends the wait, never a half-done reply.
      if (ppoll(p.data(), p.size(), &ts, &run_mask) < 0) continue;
      for (size_t i = 0; i < p.size(); i++)
        if (p[i].revents & POLLIN) {
          if (p[i].fd == lead_fd_) receive_leads();
          else receive(p[i].fd);
        }
    }
    dump();
  }

  void dump() {
    std::string j = json();
    say(LOG_INFO, "counters %s", j.c_str());
    if (o_.stats.empty()) return;
    std::string tmp = o_.stats + ".tmp";
    {
      std::ofstream out(tmp);
      out << j << "\n";
    }
    std::rename(tmp.c_str(), o_.stats.c_str());
  }

 private:
  int open_listener(const std::string &a) {
    sockaddr_storage ss{};
    socklen_t len;
    int family;
    auto *in = reinterpret_cast<sockaddr_in *>(&ss);
    auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
    if (inet_pton(AF_INET, a.c_str(), &in->sin_addr) == 1) {
      family = in->sin_family = AF_INET;
      in->sin_port = htons(o_.port);
      len = sizeof *in;
    } else if (inet_pton(AF_INET6, a.c_str(), &in6->sin6_addr) == 1) {
      family = in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(o_.port);
      len = sizeof *in6;
    } else {
      errno = EINVAL;
      return -1;
    }
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int one = 1;
    if (family == AF_INET6) {
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
      setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
    } else {
      setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
    }
    if (bind(fd, reinterpret_cast<sockaddr *>(&ss), len) < 0) {
      int e = errno;
      close(fd);
      errno = e;
      return -1;
    }
    return fd;
  }

  void refuse(const char *cls, uint64_t &counter, const Peer &p) { refuse(cls, counter, addr_text(p.addr)); }
  void refuse(const char *cls, uint64_t &counter, const std::string &from) {
    counter++;
    auto &r = refusals_[cls];
    r.count++;
    r.last = from;
  }

  // Every second: forget flows idle for a minute, and refusals as soon as their answer expires (a flood
  // of made-up flows, already capped by the lookup budget, then cannot fill the table). Every 10 s:
  // one line per refusal class, however many datagrams (a flood cannot flood the log).
  void housekeeping(int64_t now) {
    if (now - last_expiry_ >= 1000000000LL) {
      last_expiry_ = now;
      for (auto it = flows_.begin(); it != flows_.end();) {
        const Flow &f = it->second;
        bool gone = now - f.last_seen > 60000000000LL || (!f.verified && now >= f.verified_until);
        it = gone ? flows_.erase(it) : std::next(it);
      }
      for (auto it = early_.begin(); it != early_.end();) it = now >= it->second.until ? early_.erase(it) : std::next(it);
      // A peer's bucket refilled to its burst is no different from a new one.
      for (auto it = peer_trains_.begin(); it != peer_trains_.end();)
        it = now - it->second.last > 4 * 60000000000LL / std::max(1u, o_.train_peer_per_min) ? peer_trains_.erase(it)
                                                                                           : std::next(it);
    }
    if (now - last_report_ < 10000000000LL) return;
    last_report_ = now;
    for (auto &[cls, r] : refusals_)
      if (r.count) {
        say(LOG_WARNING, "refused %llu datagram(s) (%s) in the last 10 s; last from %s", (unsigned long long)r.count,
            cls.c_str(), r.last.c_str());
        r.count = 0;
      }
  }

  void receive(int fd) {
    for (int i = 0; i < 256; i++) {  // bounded: trains and other sockets get their turn
      alignas(8) uint8_t buf[2048];
      alignas(cmsghdr) char ctl[256];
      Peer p;
      iovec iov{buf, sizeof buf};
      msghdr mh{};
      mh.msg_name = &p.addr;
      mh.msg_namelen = sizeof p.addr;
      mh.msg_iov = &iov;
      mh.msg_iovlen = 1;
      mh.msg_control = ctl;
      mh.msg_controllen = sizeof ctl;
      ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
      if (n < 0) return;
      p.len = mh.msg_namelen;
      bool have_local = false;
      for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
          std::memcpy(&p.local4, CMSG_DATA(c), sizeof p.local4);
          have_local = true;
        } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
          std::memcpy(&p.local6, CMSG_DATA(c), sizeof p.local6);
          have_local = true;
        }
      }
      c_.rx++;
      if (!have_local || (mh.msg_flags & MSG_TRUNC)) {
        refuse("malformed", c_.malformed[-SOBAS_PROBE_E_LENGTH], p);
        continue;
      }
      handle(fd, p, buf, size_t(n));
    }
  }

  bool addressed_here(const Peer &p, const sobas_probe_flow &f) const {
    uint8_t local[16] = {};
    if (p.addr.ss_family == AF_INET) {
      if (f.family != 4) return false;
      std::memcpy(local, &p.local4.ipi_addr, 4);
    } else {
      const uint8_t *b = p.local6.ipi6_addr.s6_addr;
      static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      if (f.family == 4 && std::memcmp(b, mapped, 12) == 0) std::memcpy(local, b + 12, 4);
      else if (f.family == 6) std::memcpy(local, b, 16);
      else return false;
    }
    return std::memcmp(local, f.snd_addr, 16) == 0;
  }

  void handle(int fd, const Peer &p, const uint8_t *buf, size_t n) {
    sobas_probe_msg m;
    int err = sobas_probe_decode(buf, n, &m);
    if (err != SOBAS_PROBE_OK) {
      refuse(err == SOBAS_PROBE_E_VERSION ? "bad-version" : "malformed", c_.malformed[-err], p);
      return;
    }
    // Only requests: an echo or train sent to us (perhaps by a forged source) must never be answered.
    if (m.type != SOBAS_MSG_PROBE && m.type != SOBAS_MSG_TRAIN_REQ) {
      refuse("unexpected-type", c_.unexpected_type, p);
      return;
    }
    // The claim must be about this datagram: from the receiver's own address, to the address we hold the
    // connection on. Replies go to the source only, so nobody can aim them elsewhere.
    uint8_t fam, src[16];
    if (!source_of(p.addr, fam, src) || fam != m.flow.family || std::memcmp(src, m.flow.rcv_addr, 16) != 0 ||
        !addressed_here(p, m.flow)) {
      refuse("not-its-flow", c_.not_local, p);
      return;
    }
    int64_t now = now_ns();
    std::string key = flow_key(m.flow);
    auto it = flows_.find(key);
    if (it == flows_.end()) {
      if (flows_.size() >= o_.max_flows) {
        refuse("table-full", c_.table_full, p);
        return;
      }
      if (!verify_budget_.take(o_.verify_rate, o_.verify_rate / 4.0 + 1, now)) {
        refuse("verify-budget", c_.verify_budget, p);
        return;
      }
      it = flows_.emplace(key, Flow{}).first;
      lookup(it->second, key, m.flow, now);
    } else if (now >= it->second.verified_until) {
      if (!verify_budget_.take(o_.verify_rate, o_.verify_rate / 4.0 + 1, now)) {
        refuse("verify-budget", c_.verify_budget, p);
        return;
      }
      lookup(it->second, key, m.flow, now);
    } else {
      c_.cache_hits++;
    }
    Flow &f = it->second;
    f.last_seen = now;
    if (!f.verified) {
      refuse("unverified", c_.unverified, p);
      return;
    }
    if (!steered_.mark(m.flow, now)) c_.steered_full++;
    if (m.type == SOBAS_MSG_PROBE) echo(fd, p, m, f, now);
    else train_request(fd, p, m, f, now);
  }

  // LEADs from preloaded senders here. Each names a flow a receiver's probe made us verify, and comes
  // from that flow's socket's owner (or root); then its echoes carry SOBAS_PROBE_F_SENDER_LEADS. The owner
  // is the one the verifying lookup found: a LEAD costs no lookup, so any local user's LEADs cannot spend
  // those that verify remote receivers' probes. One for a flow not verified (or whose answer expired)
  // waits for its next probe's lookup (EarlyLead).
  void receive_leads() {
    for (int i = 0; i < 256; i++) {
      alignas(8) uint8_t buf[SOBAS_PROBE_LEN + 1];
      alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(ucred))];
      iovec iov{buf, sizeof buf};
      msghdr mh{};
      mh.msg_iov = &iov;
      mh.msg_iovlen = 1;
      mh.msg_control = ctl;
      mh.msg_controllen = sizeof ctl;
      ssize_t n = recvmsg(lead_fd_, &mh, MSG_DONTWAIT);
      if (n < 0) return;
      c_.rx++;
      const ucred *cr = nullptr;
      for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len == CMSG_LEN(sizeof(ucred)))
          cr = reinterpret_cast<const ucred *>(CMSG_DATA(c));
      std::string from = cr ? "pid " + std::to_string(cr->pid) + " uid " + std::to_string(cr->uid) : "a local sender";
      sobas_probe_msg m;
      int err = sobas_probe_decode(buf, size_t(n), &m);
      if (err != SOBAS_PROBE_OK || !cr || m.type != SOBAS_MSG_LEAD) {
        refuse("lead-malformed", c_.lead_refused, from);
        continue;
      }
      int64_t now = now_ns();
      std::string key = flow_key(m.flow);
      auto it = flows_.find(key);
      if (it == flows_.end() || !it->second.verified || now >= it->second.verified_until) {
        // Bounded like the flows: a local user's flood of made-up flows fills this and nothing else.
        if (early_.size() >= o_.max_flows && !early_.count(key)) {
          refuse("lead-table-full", c_.lead_refused, from);
          continue;
        }
        early_[key] = EarlyLead{cr->uid, now + kEarlyLeadNs};
        c_.early_leads++;
        continue;
      }
      take_lead(it->second, cr->uid, now, from);
    }
  }

  // A LEAD from `uid` for a verified flow: taken from its socket's owner or root.
  void take_lead(Flow &f, uint32_t uid, int64_t now, const std::string &from) {
    if (uid != 0 && uid != f.owner) {
      refuse("lead-not-owner", c_.lead_refused, from);
      return;
    }
    f.lead_until = now + kLeadHoldNs;
    c_.leads++;
  }

  // Verifies a flow, keeping its socket's owner, and takes an early LEAD waiting for it.
  void lookup(Flow &f, const std::string &key, const sobas_probe_flow &fl, int64_t now) {
    c_.netlink_queries++;
    int r = diag_.established(fl.family, fl.snd_addr, fl.snd_port, fl.rcv_addr, fl.rcv_port, &f.owner);
    if (r < 0) c_.netlink_errors++;
    f.verified = r == 1;
    f.verified_until = now + int64_t(o_.verify_cache_ms) * 1000000;
    auto early = early_.find(key);
    if (!f.verified || early == early_.end()) return;
    const EarlyLead e = early->second;
    early_.erase(early);
    if (now < e.until) take_lead(f, e.uid, now, "uid " + std::to_string(e.uid));
  }

  void echo(int fd, const Peer &p, sobas_probe_msg m, Flow &f, int64_t now) {
    if (!f.echo.take(o_.echo_rate, o_.echo_rate / 10.0 + 1, now)) {
      refuse("echo-rate", c_.echo_limited, p);
      return;
    }
    m.type = SOBAS_MSG_ECHO;
    m.flags = now < f.lead_until ? SOBAS_PROBE_F_SENDER_LEADS : 0;
    m.rsp_seq = f.rsp_seq++;
    uint8_t out[SOBAS_PROBE_LEN];
    int len = sobas_probe_encode(&m, out, sizeof out);  // the same 100 bytes as the probe
    if (len > 0 && send_to(fd, p, out, size_t(len))) c_.echoes++;
  }

  void train_request(int fd, const Peer &p, const sobas_probe_msg &m, Flow &f, int64_t now) {
    c_.train_requests++;
    // Its sender steers: a sobas receiver stands down at the flagged echo and has no use for C', and the
    // trains would burst into the buffer the sender is keeping empty (or a competitor keeps full). A
    // receiver under a policy of its own (bdp takes C'·T) asks again a second later and gets them.
    if (now < f.lead_until && !f.trains_withheld) {
      f.trains_withheld = true;
      c_.trains_withheld++;
      return;
    }
    if (f.last_train && now - f.last_train < int64_t(o_.train_interval_s) * 1000000000) {
      refuse("train-rate", c_.train_limited, p);
      return;
    }
    // Per peer address too: one host opening many connections must not multiply the trains.
    if (!peer_trains_[addr_key(p.addr)].take(o_.train_peer_per_min / 60.0, 4, now)) {
      refuse("train-rate", c_.train_limited, p);
      return;
    }
    f.last_train = now;
    TrainJob j;
    j.fd = fd;
    j.to = p;
    j.msg = sobas_probe_msg{};
    j.msg.type = SOBAS_MSG_TRAIN;
    j.msg.flow = m.flow;
    j.msg.nonce = m.nonce;
    j.msg.seq = m.seq;
    j.msg.count = uint16_t(std::min<unsigned>({m.train_len, o_.train_len, SOBAS_TRAIN_MAX_LEN}));
    unsigned max_size = m.flow.family == 6 ? SOBAS_TRAIN_MAX_SIZE - 20 : SOBAS_TRAIN_MAX_SIZE;
    j.msg.pkt_size = uint16_t(std::min<unsigned>(m.pkt_size, max_size));
    j.trains = std::min<unsigned>(m.trains, o_.trains);
    j.due = now;
    jobs_.push_back(j);
    send_due_trains(now);
  }

  // Each train leaves as one sendmmsg: back to back at the host's line rate.
  void send_due_trains(int64_t now) {
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      TrainJob &j = *it;
      if (j.due > now) {
        ++it;
        continue;
      }
      std::vector<std::vector<uint8_t>> pkts(j.msg.count, std::vector<uint8_t>(j.msg.pkt_size));
      std::vector<mmsghdr> mm(j.msg.count);
      std::vector<iovec> iov(j.msg.count);
      std::vector<std::vector<char>> ctl(j.msg.count);
      bool ok = true;
      for (unsigned i = 0; i < j.msg.count && ok; i++) {
        sobas_probe_msg m = j.msg;
        m.trains = uint8_t(j.next);
        m.train_len = uint16_t(i);
        ok = sobas_probe_encode(&m, pkts[i].data(), pkts[i].size()) > 0;
        iov[i] = {pkts[i].data(), pkts[i].size()};
        mm[i] = {};
        fill_reply(mm[i].msg_hdr, j.to, &iov[i], ctl[i]);
      }
      int sent = ok ? sendmmsg(j.fd, mm.data(), j.msg.count, MSG_DONTWAIT) : 0;
      if (sent > 0) c_.train_packets += unsigned(sent);
      if (++j.next >= j.trains) {
        c_.train_sets++;
        it = jobs_.erase(it);
      } else {
        j.due = now + int64_t(o_.train_gap_ms) * 1000000;
        ++it;
      }
    }
  }

  // One control message carrying `value` (the reply's source address).
  template <typename T>
  static void put_cmsg(msghdr &mh, std::vector<char> &ctl, int level, int type, const T &value) {
    ctl.assign(CMSG_SPACE(sizeof(T)), 0);
    mh.msg_control = ctl.data();
    mh.msg_controllen = ctl.size();
    cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = level;
    c->cmsg_type = type;
    c->cmsg_len = CMSG_LEN(sizeof(T));
    std::memcpy(CMSG_DATA(c), &value, sizeof value);
  }

  // A reply to p leaves from the address p's request came to (a multi-homed host must not answer
  // from another address: the receiver's socket only accepts its flow's sobasd).
  static void fill_reply(msghdr &mh, const Peer &p, iovec *iov, std::vector<char> &ctl) {
    mh.msg_name = const_cast<sockaddr_storage *>(&p.addr);
    mh.msg_namelen = p.len;
    mh.msg_iov = iov;
    mh.msg_iovlen = 1;
    if (p.addr.ss_family == AF_INET) {
      in_pktinfo pi{};
      pi.ipi_spec_dst = p.local4.ipi_addr;
      put_cmsg(mh, ctl, IPPROTO_IP, IP_PKTINFO, pi);
    } else {
      in6_pktinfo pi{};
      pi.ipi6_addr = p.local6.ipi6_addr;
      put_cmsg(mh, ctl, IPPROTO_IPV6, IPV6_PKTINFO, pi);
    }
  }

  bool send_to(int fd, const Peer &p, const uint8_t *buf, size_t n) {
    iovec iov{const_cast<uint8_t *>(buf), n};
    msghdr mh{};
    std::vector<char> ctl;
    fill_reply(mh, p, &iov, ctl);
    return sendmsg(fd, &mh, MSG_DONTWAIT) == ssize_t(n);
  }

  std::string json() const {
    nlohmann::ordered_json j;
    j["rx"] = c_.rx;
    j["echoes"] = c_.echoes;
    j["train_requests"] = c_.train_requests;
    j["train_sets"] = c_.train_sets;
    j["train_packets"] = c_.train_packets;
    j["malformed"] = malformed_total();
    j["bad_version"] = c_.malformed[-SOBAS_PROBE_E_VERSION];
    j["unexpected_type"] = c_.unexpected_type;
    j["not_its_flow"] = c_.not_local;
    j["unverified"] = c_.unverified;
    j["verify_budget"] = c_.verify_budget;
    j["echo_limited"] = c_.echo_limited;
    j["train_limited"] = c_.train_limited;
    j["table_full"] = c_.table_full;
    j["steered_table"] = steered_.open_ok();
    j["steered_full"] = c_.steered_full;
    j["netlink_queries"] = c_.netlink_queries;
    j["netlink_errors"] = c_.netlink_errors;
    j["cache_hits"] = c_.cache_hits;
    j["lead_socket"] = lead_fd_ >= 0;
    j["leads"] = c_.leads;
    j["lead_refused"] = c_.lead_refused;
    j["early_leads"] = c_.early_leads;
    j["trains_withheld"] = c_.trains_withheld;
    j["flows"] = flows_.size();
    return j.dump();
  }

  uint64_t malformed_total() const {
    uint64_t t = 0;
    for (int i = 1; i < SOBAS_PROBE_N_ERRORS; i++)
      if (i != -SOBAS_PROBE_E_VERSION) t += c_.malformed[i];
    return t;
  }

  struct Refusal {
    uint64_t count = 0;
    std::string last;
  };

  const Options &o_;
  std::vector<int> fds_;
  int lead_fd_ = -1;
  SockDiag diag_;
  SteeredTable steered_;
  std::unordered_map<std::string, Flow> flows_;
  std::unordered_map<std::string, EarlyLead> early_;
  std::unordered_map<std::string, Bucket> peer_trains_;  // per source address
  std::deque<TrainJob> jobs_;
  Bucket verify_budget_;
  Counters c_;
  std::map<std::string, Refusal> refusals_;
  int64_t last_report_ = 0, last_expiry_ = 0;
};

void usage(FILE *to) {
  std::fprintf(to,
               "usage: sobasd [options]\n"
               "  --port N             UDP port (default %u)\n"
               "  --listen ADDR        address to answer on, repeatable (default 0.0.0.0 and ::)\n"
               "  --user NAME          user to become after binding when started as root (default nobody;\n"
               "                       'root' keeps root)\n"
               "  --trains N           trains per request, 1-%u (default 8)\n"
               "  --train-len N        packets per train, 2-%u (default 32)\n"
               "  --train-gap-ms N     pause between trains (default 10)\n"
               "  --train-interval-s N at most one train set per flow this often (default 5)\n"
               "  --train-peer-per-min N  train sets per minute per peer address, bursts of 4 (default 30)\n"
               "  --echo-rate N        echoes per second per flow (default 200)\n"
               "  --verify-rate N      connection lookups per second, all peers (default 200)\n"
               "  --verify-cache-ms N  how long a lookup's answer holds (default 3000)\n"
               "  --max-flows N        flows remembered at once (default 4096)\n"
               "  --stats FILE         write counters as JSON on SIGUSR1 or SIGHUP, and at exit\n"
               "  -V, --version        print the version\n",
               SOBAS_PROBE_DEFAULT_PORT, SOBAS_TRAIN_MAX_TRAINS, SOBAS_TRAIN_MAX_LEN);
}

// A whole decimal number in [lo, hi], or exit with a message naming the option.
unsigned number(const char *opt, const char *v, unsigned lo, unsigned hi) {
  char *end = nullptr;
  errno = 0;
  unsigned long n = v ? std::strtoul(v, &end, 10) : 0;
  if (!v || !*v || *end || errno || n < lo || n > hi || v[0] == '-') {
    say(LOG_ERR, "%s needs a number from %u to %u, got '%s'", opt, lo, hi, v ? v : "");
    std::exit(2);
  }
  return unsigned(n);
}

Options parse(int argc, char **argv) {
  Options o;
  enum { O_PORT = 256, O_LISTEN, O_USER, O_TRAINS, O_TRAIN_LEN, O_GAP, O_INTERVAL, O_PEER, O_ECHO, O_VERIFY,
         O_CACHE, O_MAX_FLOWS, O_STATS };
  static const option longs[] = {{"help", no_argument, nullptr, 'h'},
                                 {"version", no_argument, nullptr, 'V'},
                                 {"port", required_argument, nullptr, O_PORT},
                                 {"listen", required_argument, nullptr, O_LISTEN},
                                 {"user", required_argument, nullptr, O_USER},
                                 {"trains", required_argument, nullptr, O_TRAINS},
                                 {"train-len", required_argument, nullptr, O_TRAIN_LEN},
                                 {"train-gap-ms", required_argument, nullptr, O_GAP},
                                 {"train-interval-s", required_argument, nullptr, O_INTERVAL},
                                 {"train-peer-per-min", required_argument, nullptr, O_PEER},
                                 {"echo-rate", required_argument, nullptr, O_ECHO},
                                 {"verify-rate", required_argument, nullptr, O_VERIFY},
                                 {"verify-cache-ms", required_argument, nullptr, O_CACHE},
                                 {"max-flows", required_argument, nullptr, O_MAX_FLOWS},
                                 {"stats", required_argument, nullptr, O_STATS},
                                 {nullptr, 0, nullptr, 0}};
  opterr = 0;  // our own messages, in the daemon's log format
  for (int c; (c = getopt_long(argc, argv, ":hV", longs, nullptr)) != -1;) {
    switch (c) {
      case 'h': usage(stdout); std::exit(0);
      case 'V': std::printf("sobasd %s\n", SOBAS_VERSION); std::exit(0);
      case O_PORT: o.port = uint16_t(number("--port", optarg, 1, 65535)); break;
      case O_LISTEN: o.listen.push_back(optarg); break;
      case O_USER: o.user = optarg; break;
      case O_TRAINS: o.trains = number("--trains", optarg, 1, SOBAS_TRAIN_MAX_TRAINS); break;
      case O_TRAIN_LEN: o.train_len = number("--train-len", optarg, 2, SOBAS_TRAIN_MAX_LEN); break;
      case O_GAP: o.train_gap_ms = number("--train-gap-ms", optarg, 0, 1000); break;
      case O_INTERVAL: o.train_interval_s = number("--train-interval-s", optarg, 1, 86400); break;
      case O_PEER: o.train_peer_per_min = number("--train-peer-per-min", optarg, 1, 6000); break;
      case O_ECHO: o.echo_rate = number("--echo-rate", optarg, 1, 100000); break;
      case O_VERIFY: o.verify_rate = number("--verify-rate", optarg, 1, 100000); break;
      case O_CACHE: o.verify_cache_ms = number("--verify-cache-ms", optarg, 0, 600000); break;
      case O_MAX_FLOWS: o.max_flows = number("--max-flows", optarg, 1, 10000000); break;
      case O_STATS: o.stats = optarg; break;
      case ':': say(LOG_ERR, "%s needs a value", argv[optind - 1]); std::exit(2);
      default:
        say(LOG_ERR, "unknown option '%s'", optopt > 0 && optopt < 128 ? (std::string("-") + char(optopt)).c_str()
                                                                          : argv[optind - 1]);
        usage(stderr);
        std::exit(2);
    }
  }
  if (optind < argc) {
    say(LOG_ERR, "unexpected argument '%s'", argv[optind]);
    usage(stderr);
    std::exit(2);
  }
  return o;
}

// Root is only needed to bind: answer the Internet as an unprivileged user.
int drop_privileges(const std::string &user) {
  if (geteuid() != 0 || user == "root") return 0;
  passwd *pw = getpwnam(user.c_str());
  if (!pw) {
    say(LOG_ERR, "no user '%s' to run as (--user)", user.c_str());
    return -1;
  }
  if (setgroups(0, nullptr) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) {
    say(LOG_ERR, "cannot become '%s': %s", user.c_str(), std::strerror(errno));
    return -1;
  }
  if (setuid(0) == 0) {  // the drop must be for good
    say(LOG_ERR, "still able to regain root after dropping to '%s'", user.c_str());
    return -1;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  struct sigaction sa{};
  // SIGHUP, which daemons take as "reload", writes the counters like SIGUSR1: there is nothing else to
  // reload, and a hang-up is no reason to stop answering.
  sa.sa_handler = [](int s) {
    if (s == SIGUSR1 || s == SIGHUP) g_dump = 1;
    else g_stop = 1;
  };
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
  sigset_t block;
  sigemptyset(&block);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&block, s);
  sigprocmask(SIG_BLOCK, &block, nullptr);
  signal(SIGPIPE, SIG_IGN);

  Responder r(o);
  if (r.bind_all() != 0) return 1;
  if (!r.diag_ok()) {
    say(LOG_ERR, "no NETLINK_SOCK_DIAG (%s): cannot verify peers, refusing to run", std::strerror(errno));
    return 1;
  }
  r.publish_steered();  // before the drop: the senders trust a file only its owner or root can shrink
  r.listen_leads();
  if (drop_privileges(o.user) != 0) return 1;
  r.run();
  return 0;
}
