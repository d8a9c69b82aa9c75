// sobas_top.cc — sobas-top: the live monitor of every preloaded flow of the user, read from the shared-memory decision ring.
#include <curses.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "clocks.h"
#include "ring_file.h"
#include "measure.h"
#include "sobas/engine.h"
#include "sobas/policy.h"
#include "sobas/ring.h"

namespace {

using sobas::mono_ns;
using sobas::real_ns;

const char *event_name(uint8_t e) {
  static const char *const n[] = {"?", "open", "sample", "decision", "close"};
  return e < 5 ? n[e] : "?";
}
const char *role_name(uint8_t r) {
  static const char *const n[] = {"none", "receiver", "sender", "both"};
  return r < 4 ? n[r] : "?";
}
const char *probe_name(uint8_t p) {
  static const char *const n[] = {"off", "pending", "active", "none"};
  return p < 4 ? n[p] : "?";
}
const char *lever_name(uint8_t l) {
  static const char *const n[] = {"-", "clamp", "lock+clamp", "released", "pacing"};
  return l < 5 ? n[l] : "?";
}
std::string state_name(uint8_t s) { return s ? sobas_state_name(sobas_state(s)) : "-"; }

std::string addr_text(uint8_t family, const uint8_t *a, uint16_t port) {
  char ip[INET6_ADDRSTRLEN] = "?";
  inet_ntop(family == 6 ? AF_INET6 : AF_INET, a, ip, sizeof ip);
  return family == 6 ? "[" + std::string(ip) + "]:" + std::to_string(port) : std::string(ip) + ":" + std::to_string(port);
}

// How many bytes of well-formed UTF-8 start at s[i] (0: none): a program name is any 15 bytes a
// process chose, cut where the kernel cut it.
size_t utf8_len(const std::string &s, size_t i) {
  unsigned char c = s[i];
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (!n || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; k++)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  unsigned char c1 = s[i + 1];
  if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 > 0x8f))
    return 0;  // overlong, a surrogate, or past U+10FFFF
  return n;
}

// A JSON string's contents: UTF-8 kept as it is, control characters escaped, a byte that is not
// UTF-8 replaced by U+FFFD.
std::string json_escape(const std::string &s) {
  std::string o;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      o += '\\', o += char(c), i++;
    } else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b, i++;
    } else if (c < 0x80) {
      o += char(c), i++;
    } else if (size_t n = utf8_len(s, i)) {
      o.append(s, i, n), i += n;
    } else {
      o += "\\ufffd", i++;
    }
  }
  return o;
}

// The program name as the record carries it: at most 15 bytes, NUL-padded; never trusted to end.
std::string comm_of(const sobas_ring_record &r) { return std::string(r.comm, strnlen(r.comm, sizeof r.comm)); }

std::string lower(std::string s) {
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// What held the flow back in its last window, in words: the shim's reading of the kernel (ring minor
// 2), with sobas's own state beside it where that explains the reading.
std::string limit_of(const sobas_ring_record &r) {
  if (r.event == SOBAS_EV_CLOSE) return "closed";
  if (r.why == SOBAS_WHY_PEER_WINDOW) return "peer's window (its sobas steers)";
  bool aside = r.state == SOBAS_ST_CONGESTED;
  std::string beside = !aside ? "" : r.why == SOBAS_WHY_COMPETING ? ", beside a competing flow" : ", congested";
  switch (sobas_limit(r.limit)) {
    case SOBAS_LIMIT_APP: return r.role == 2 ? "application (not writing)" : "application (not reading)";
    case SOBAS_LIMIT_PEER_WINDOW: return "peer's window";
    case SOBAS_LIMIT_SNDBUF: return "send buffer";
    case SOBAS_LIMIT_PATH: return "path (cwnd)" + beside;
    case SOBAS_LIMIT_RCV_WINDOW: return "receive window";
    case SOBAS_LIMIT_SENDER_OR_PATH: return "sender or path" + beside;
    case SOBAS_LIMIT_SOBAS:
      return std::string(r.lever == 4 ? "pacing S/T" : "window S") + " (" + sobas_policy_name(sobas_policy(r.policy)) +
             (r.why == SOBAS_WHY_LIFT ? "), lifted to look" : ")");
    default: break;
  }
  // A writer before minor 2, or no window read yet: sobas's state says what it does to the flow.
  if (aside) return r.why == SOBAS_WHY_COMPETING ? "competing flow: TCP" : "congested path: TCP";
  if (r.state == SOBAS_ST_DECIDED)
    return std::string(r.lever == 4 ? "pacing S/T (" : "window S (") + sobas_policy_name(sobas_policy(r.policy)) + ")";
  if (r.state >= SOBAS_ST_SLOW_START && r.state <= SOBAS_ST_CA_GROWING) return r.s_bytes ? "window S, searching" : "searching";
  return "-";
}

// One flow as the latest record describes it.
struct Flow {
  sobas_ring_record r{};
};

struct Stats {
  uint64_t records = 0, closed = 0;
  std::map<std::string, uint64_t> decisions_by_reason;
};

// The ring, mapped read-only, and this reader's cursor over it.
class Ring {
 public:
  explicit Ring(std::string path) : path_(std::move(path)) {}
  ~Ring() { unmap(); }

  // Maps the ring if needed; a ring removed or replaced under it is mapped afresh and read from its
  // oldest record. While mapped, the old file keeps its inode number, so a new one differs; once
  // unmapped, ext4 hands that number to the next file, so any mapping after the first is a new ring.
  // Returns "" or what is wrong.
  std::string attach() {
    struct stat st;
    if (base_ && stat(path_.c_str(), &st) == 0 && uint64_t(st.st_ino) == ino_) return "";
    unmap();
    char err[640] = "";
    if (sobas_ring_open(path_.c_str(), 0, &map_, &base_, &size_, &ino_, err, sizeof err) != 0) {
      base_ = nullptr;
      if (errno == ENOENT || std::strstr(err, "No such file"))
        return "no ring at " + path_ + " yet: no preloaded program of this user has written one (SOBAS_RING may point elsewhere)";
      return err;
    }
    sobas_ring_cursor_oldest(&map_, &cur_);
    if (attached_before_) recreated_++;
    attached_before_ = true;
    return "";
  }

  bool read(sobas_ring_record *out) { return base_ && sobas_ring_read(&map_, &cur_, out, mono_ns()) == 1; }
  uint64_t lost() const { return cur_.lost + lost_before_; }
  uint64_t torn() const { return cur_.torn + torn_before_; }
  uint64_t dropped() const { return base_ ? __atomic_load_n(&map_.h->dropped, __ATOMIC_RELAXED) : 0; }
  unsigned recreated() const { return recreated_; }
  const std::string &path() const { return path_; }

 private:
  void unmap() {
    if (base_) {
      lost_before_ += cur_.lost;
      torn_before_ += cur_.torn;
      munmap(base_, size_);
    }
    base_ = nullptr;
    cur_ = sobas_ring_cursor{};
  }
  std::string path_;
  sobas_ring_map map_{};
  void *base_ = nullptr;
  size_t size_ = 0;
  uint64_t ino_ = 0;
  bool attached_before_ = false;
  sobas_ring_cursor cur_{};
  uint64_t lost_before_ = 0, torn_before_ = 0;
  unsigned recreated_ = 0;
};

struct Options {
  std::string ring;
  bool batch = false, json = false, follow = false;
  long iterations = -1;  // -1: until stopped
  double delay = 1.0;
  double stale = 10.0;
  std::string prometheus;
  std::vector<int> columns;  // --columns; empty: all in tables, kNarrow in a terminal
};

enum Column { C_PID, C_PROG, C_LOCAL, C_REMOTE, C_STATE, C_RATE, C_RTT, C_S, C_WND, C_RETR, C_AGE, C_PROBE, C_LIMIT, N_COLS };
const char *const kHeads[N_COLS] = {"PID", "PROGRAM", "LOCAL", "REMOTE", "STATE", "RATE", "RTT", "S", "WINDOW",
                                    "RETR", "AGE", "PROBE", "LIMITED BY"};
const char *const kKeys[N_COLS] = {"pid", "program", "local", "remote", "state", "rate", "rtt", "s", "window",
                                   "retr", "age", "probe", "limit"};
const int kWidths[N_COLS] = {7, 12, 22, 21, 10, 9, 7, 8, 8, 5, 6, 7, 20};
// What fits 80 columns: RATE and RTT for every flow, LIMITED BY in whatever is left.
const std::vector<int> kNarrow = {C_PID, C_PROG, C_REMOTE, C_STATE, C_RATE, C_RTT, C_S, C_LIMIT};
std::vector<int> all_columns() {
  std::vector<int> v;
  for (int c = 0; c < N_COLS; c++) v.push_back(c);
  return v;
}

// Rates in SI units (1 Mb/s = 10^6 bit/s, as links are sold); sizes in binary ones (KiB, MiB), as the
// config's K and M (sobas.conf(5)) and the kernel's buffers count.
std::string human(double v, bool bits, const char *unit_b, const char *unit_B) {
  const char *u = bits ? unit_b : unit_B;
  const char *p[] = {"", "k", "M", "G", "T"};
  int i = 0;
  while (v >= 1000 && i < 4) v /= 1000, i++;
  char b[32];
  std::snprintf(b, sizeof b, i ? "%.1f%s%s" : "%.0f%s%s", v, p[i], u);
  return b;
}

std::string human_size(double bytes) {
  const char *p[] = {"B", "KiB", "MiB", "GiB"};
  int i = 0;
  while (bytes >= 1000 && i < 3) bytes /= 1024, i++;  // at most 3 digits before the point: 8 columns
  char b[32];
  std::snprintf(b, sizeof b, i ? "%.1f%s" : "%.0f%s", bytes, p[i]);
  return b;
}

std::string cell(const Flow &f, int c, bool bits) {
  const sobas_ring_record &r = f.r;
  char b[64];
  switch (c) {
    case C_PID: return std::to_string(r.pid);
    case C_PROG: return comm_of(r);
    case C_LOCAL: return addr_text(r.family, r.laddr, r.lport);
    case C_REMOTE: return addr_text(r.family, r.raddr, r.rport);
    case C_STATE: return state_name(r.state);
    case C_RATE: return human(bits ? double(r.rate_bps) : double(r.rate_bps) / 8, bits, "b/s", "B/s");
    case C_RTT: std::snprintf(b, sizeof b, "%.1fms", r.rtt_us / 1000.0); return b;
    case C_S: return r.s_bytes ? human_size(double(r.s_bytes)) : "-";
    case C_WND: return r.rcv_wnd ? human_size(double(r.rcv_wnd)) : "-";
    case C_RETR: return std::to_string(r.retrans);
    case C_AGE: std::snprintf(b, sizeof b, "%.0fs", r.age_ms / 1000.0); return b;
    case C_PROBE: return probe_name(r.probe);
    default: return limit_of(r);
  }
}

// Sort key: numbers compare as numbers.
bool less_by(const Flow &a, const Flow &b, int c) {
  const sobas_ring_record &x = a.r, &y = b.r;
  switch (c) {
    case C_PID: return x.pid < y.pid;
    case C_RATE: return x.rate_bps < y.rate_bps;
    case C_RTT: return x.rtt_us < y.rtt_us;
    case C_S: return x.s_bytes < y.s_bytes;
    case C_WND: return x.rcv_wnd < y.rcv_wnd;
    case C_RETR: return x.retrans < y.retrans;
    case C_AGE: return x.age_ms < y.age_ms;
    default: return cell(a, c, true) < cell(b, c, true);
  }
}

constexpr double kLingerS = 5;  // a closed flow's last line stays this long

class Monitor {
 public:
  explicit Monitor(const Options &o, std::string path) : o_(o), ring_(std::move(path)) {}

  // Reads every new record into the flow table; returns "" or what is wrong with the ring.
  std::string poll() {
    std::string err = ring_.attach();
    if (!err.empty()) return err;
    sobas_ring_record r;
    while (ring_.read(&r)) take(r);
    // A closed flow stays on show for kLingerS (its final byte count), then goes; a flow whose process
    // died without a close record ages out after --stale, both by the time of its last record.
    int64_t now = real_ns();
    for (auto it = flows_.begin(); it != flows_.end();) {
      double keep = it->second.r.event == SOBAS_EV_CLOSE ? kLingerS : o_.stale;
      it = now - it->second.r.t_ns > int64_t(keep * 1e9) ? flows_.erase(it) : std::next(it);
    }
    return "";
  }

  void take(const sobas_ring_record &r) {
    stats_.records++;
    if (r.event == SOBAS_EV_DECISION) stats_.decisions_by_reason[sobas_reason_name(sobas_reason(r.why))]++;
    if (o_.follow) print_event(r);
    if (r.event == SOBAS_EV_CLOSE) stats_.closed++;
    flows_[std::make_pair(r.pid, r.flow_id)] = Flow{r};
  }

  std::vector<Flow> rows(int sort, bool reverse, const std::string &filter, bool bits) const {
    std::vector<Flow> v;
    for (const auto &kv : flows_) {
      const Flow &f = kv.second;
      if (!filter.empty()) {
        std::string hay = comm_of(f.r) + " " + cell(f, C_LOCAL, bits) + " " + cell(f, C_REMOTE, bits) + " " +
                          std::to_string(f.r.pid) + " " + state_name(f.r.state);
        if (lower(hay).find(lower(filter)) == std::string::npos) continue;
      }
      v.push_back(f);
    }
    std::stable_sort(v.begin(), v.end(), [&](const Flow &a, const Flow &b) {
      return reverse ? less_by(b, a, sort) : less_by(a, b, sort);
    });
    return v;
  }

  std::string header_line(bool bits) const {
    double total = 0;
    size_t open = 0;
    for (const auto &kv : flows_)
      if (kv.second.r.event != SOBAS_EV_CLOSE) total += double(kv.second.r.rate_bps), open++;
    size_t closed = flows_.size() - open;
    char b[320], c[40] = "";
    if (closed) std::snprintf(c, sizeof c, " (+%zu just closed)", closed);
    std::snprintf(b, sizeof b, "sobas-top  %zu flow%s%s  total %s  records %" PRIu64 "  lost %" PRIu64 "  torn %" PRIu64
                  "  writer-dropped %" PRIu64 "%s",
                  open, open == 1 ? "" : "s", c, human(bits ? total : total / 8, bits, "b/s", "B/s").c_str(),
                  stats_.records, ring_.lost(), ring_.torn(), ring_.dropped(),
                  ring_.recreated() ? "  (ring recreated)" : "");
    return b;
  }

  void print_table(FILE *out, int sort, bool reverse, bool bits, const std::vector<int> &cols) const {
    std::fprintf(out, "%s\n", header_line(bits).c_str());
    for (int c : cols) std::fprintf(out, "%-*s ", kWidths[c], kHeads[c]);
    std::fputc('\n', out);
    for (const Flow &f : rows(sort, reverse, "", bits)) {
      for (int c : cols) std::fprintf(out, "%-*s ", kWidths[c], cell(f, c, bits).c_str());
      std::fputc('\n', out);
    }
    std::fflush(out);
  }

  static std::string record_json(const sobas_ring_record &r, int64_t ts_ns) {
    char b[1400];
    std::snprintf(b, sizeof b,
                  "{\"ts\":%.3f,\"event\":\"%s\",\"pid\":%u,\"program\":\"%s\",\"flow\":%" PRIu64 ",\"role\":\"%s\","
                  "\"local\":\"%s\",\"remote\":\"%s\",\"state\":\"%s\",\"why\":\"%s\",\"rate_bps\":%" PRIu64
                  ",\"rtt_us\":%u,\"base_rtt_us\":%u,\"s_bytes\":%" PRIu64 ",\"rcv_wnd\":%u,\"bytes_received\":%" PRIu64
                  ",\"bytes_acked\":%" PRIu64 ",\"app_bytes\":%" PRIu64 ",\"retrans\":%u,\"lost\":%u,\"age_ms\":%u,"
                  "\"probe\":\"%s\",\"cap_bps\":%" PRIu64 ",\"lever\":\"%s\",\"policy\":\"%s\",\"limit\":\"%s\",\"limited_by\":\"%s\"}",
                  ts_ns / 1e9, event_name(r.event), r.pid, json_escape(comm_of(r)).c_str(), r.flow_id,
                  role_name(r.role), addr_text(r.family, r.laddr, r.lport).c_str(),
                  addr_text(r.family, r.raddr, r.rport).c_str(), state_name(r.state).c_str(),
                  r.why ? sobas_reason_name(sobas_reason(r.why)) : "-", r.rate_bps, r.rtt_us, r.base_rtt_us, r.s_bytes,
                  r.rcv_wnd, r.bytes_received, r.bytes_acked, r.app_bytes, r.retrans, r.lost, r.age_ms,
                  probe_name(r.probe), r.cap_bps, lever_name(r.lever), sobas_policy_name(sobas_policy(r.policy)),
                  sobas_limit_name(sobas_limit(r.limit)),
                  limit_of(r).c_str());
    return b;
  }

  void print_json(FILE *out, int sort, bool reverse) const {
    int64_t now = real_ns();
    for (const Flow &f : rows(sort, reverse, "", true)) std::fprintf(out, "%s\n", record_json(f.r, now).c_str());
    std::fflush(out);
  }

  void print_event(const sobas_ring_record &r) const {
    if (o_.json) std::printf("%s\n", record_json(r, r.t_ns).c_str());
    else
      std::printf("%.3f %-8s pid=%u %s flow=%" PRIu64 " %s -> %s state=%s why=%s rate=%s s=%" PRIu64 " rtt_us=%u probe=%s\n",
                  r.t_ns / 1e9, event_name(r.event), r.pid, comm_of(r).c_str(), r.flow_id,
                  addr_text(r.family, r.laddr, r.lport).c_str(), addr_text(r.family, r.raddr, r.rport).c_str(),
                  state_name(r.state).c_str(), r.why ? sobas_reason_name(sobas_reason(r.why)) : "-",
                  human(double(r.rate_bps), true, "b/s", "B/s").c_str(), r.s_bytes, r.rtt_us, probe_name(r.probe));
    std::fflush(stdout);
  }

  // node_exporter textfile collector format, written to a temporary name and renamed.
  std::string write_prometheus(const std::string &path) const {
    std::string tmp = path + ".tmp";
    {
      std::ofstream o(tmp);
      if (!o) return "cannot write " + tmp;
      // Every state and limit has its series, 0 included: a series that appears and vanishes breaks
      // rate() and alerts on absent().
      std::map<std::string, int> by_state, by_limit;
      std::map<std::string, double> rate_by_state;
      for (int s = 0; s <= SOBAS_ST_CONGESTED; s++) by_state[state_name(uint8_t(s))] = 0, rate_by_state[state_name(uint8_t(s))] = 0;
      for (int l = 0; l <= SOBAS_LIMIT_SENDER_OR_PATH; l++) by_limit[sobas_limit_name(sobas_limit(l))] = 0;
      for (const auto &kv : flows_) {
        if (kv.second.r.event == SOBAS_EV_CLOSE) continue;  // on show a while, but no longer a flow
        std::string st = state_name(kv.second.r.state);
        by_state[st]++;
        by_limit[sobas_limit_name(sobas_limit(kv.second.r.limit))]++;
        rate_by_state[st] += double(kv.second.r.rate_bps) / 8;
      }
      o << "# HELP sobas_build_info The sobas-top that wrote this file.\n"
        << "# TYPE sobas_build_info gauge\n"
        << "sobas_build_info{version=\"" << SOBAS_VERSION << "\"} 1\n";
      o << "# HELP sobas_flows Bulk TCP flows of preloaded programs, by SOBAS engine state.\n"
        << "# TYPE sobas_flows gauge\n";
      for (const auto &kv : by_state) o << "sobas_flows{state=\"" << kv.first << "\"} " << kv.second << "\n";
      o << "# HELP sobas_flows_limited Bulk TCP flows by what held them back in their last window.\n"
        << "# TYPE sobas_flows_limited gauge\n";
      for (const auto &kv : by_limit) o << "sobas_flows_limited{limit=\"" << kv.first << "\"} " << kv.second << "\n";
      o << "# HELP sobas_flow_rate_bytes_per_second Sum of the flows' last measured rates, by state.\n"
        << "# TYPE sobas_flow_rate_bytes_per_second gauge\n";
      for (const auto &kv : rate_by_state)
        o << "sobas_flow_rate_bytes_per_second{state=\"" << kv.first << "\"} " << kv.second << "\n";
      o << "# HELP sobas_decisions_total Engine decisions read from the ring, by reason.\n"
        << "# TYPE sobas_decisions_total counter\n";
      for (const auto &kv : stats_.decisions_by_reason)
        o << "sobas_decisions_total{reason=\"" << kv.first << "\"} " << kv.second << "\n";
      o << "# HELP sobas_flows_closed_total Flows whose close was read from the ring.\n"
        << "# TYPE sobas_flows_closed_total counter\nsobas_flows_closed_total " << stats_.closed << "\n"
        << "# HELP sobas_ring_records_total Records read from the ring.\n"
        << "# TYPE sobas_ring_records_total counter\nsobas_ring_records_total " << stats_.records << "\n"
        << "# HELP sobas_ring_records_lost_total Records overwritten or never completed before this reader got them.\n"
        << "# TYPE sobas_ring_records_lost_total counter\nsobas_ring_records_lost_total " << ring_.lost() << "\n"
        << "# HELP sobas_ring_records_torn_total Records that changed under the copy or failed their check.\n"
        << "# TYPE sobas_ring_records_torn_total counter\nsobas_ring_records_torn_total " << ring_.torn() << "\n"
        << "# HELP sobas_ring_writer_dropped_total Records writers gave up because their slot was busy.\n"
        << "# TYPE sobas_ring_writer_dropped_total counter\nsobas_ring_writer_dropped_total " << ring_.dropped() << "\n";
      if (!o.flush()) return "cannot write " + tmp;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) return "cannot rename " + tmp + " to " + path;
    return "";
  }

  size_t flow_count() const { return flows_.size(); }

 private:
  const Options &o_;
  Ring ring_;
  std::map<std::pair<uint32_t, uint64_t>, Flow> flows_;
  Stats stats_;
};

volatile sig_atomic_t g_stop = 0;

void usage(FILE *to) {
  std::fprintf(to,
               "usage: sobas-top [options]\n"
               "Live table of the bulk TCP flows of this user's preloaded programs, from the decision ring.\n"
               "  --ring PATH|NAME  the ring (default: $SOBAS_RING, else /dev/shm/sobas-UID.ring)\n"
               "  -d SECONDS        refresh interval (default 1)\n"
               "  -b                batch: plain text tables, no escape codes (survives SIGHUP)\n"
               "  -n N              N refreshes, then exit\n"
               "  --once            one table of what the ring holds now, then exit (-b -n 1)\n"
               "  --json            JSON Lines instead of tables: one object per flow per refresh (with ts)\n"
               "  --follow          every record as it arrives (text, or JSON Lines with --json)\n"
               "  --prometheus FILE also write node_exporter textfile metrics there, atomically, each refresh\n"
               "  --stale SECONDS   forget a flow with no record for this long (default 10); closed flows\n"
               "                    stay on show for 5 s\n"
               "  --columns LIST    the columns to show, comma-separated (pid,program,local,remote,state,rate,\n"
               "                    rtt,s,window,retr,age,probe,limit) or all; default: all in tables, in a\n"
               "                    terminal those that fit 80 columns (c shows all)\n"
               "  -V, --version     print the version\n"
               "Keys: < > sort column, r reverse, b bits/bytes, c all columns, arrows PgUp PgDn Home End\n"
               "      scroll, / filter (any case), p or space pause, h help, q quit.\n");
}

double seconds_arg(const char *opt, const char *v) {
  char *end = nullptr;
  double d = v ? std::strtod(v, &end) : 0;
  if (!v || !*v || *end || !(d > 0) || d > 86400) {
    std::fprintf(stderr, "sobas-top: %s needs a number of seconds above 0, got '%s'\n", opt, v ? v : "");
    std::exit(2);
  }
  return d;
}

// --columns: names (as kKeys, any case) separated by commas, or "all".
std::vector<int> columns_arg(const char *v) {
  std::vector<int> out;
  std::string list = lower(v ? v : ""), name;
  if (list == "all") return all_columns();
  for (size_t i = 0; i <= list.size(); i++) {
    if (i < list.size() && list[i] != ',') {
      name += list[i];
      continue;
    }
    int c = int(std::find(kKeys, kKeys + N_COLS, name) - kKeys);
    if (c == N_COLS) {
      std::string known;
      for (const char *k : kKeys) known += std::string(known.empty() ? "" : ",") + k;
      std::fprintf(stderr, "sobas-top: --columns: no column '%s' (columns: %s, or all)\n", name.c_str(), known.c_str());
      std::exit(2);
    }
    out.push_back(c);
    name.clear();
  }
  return out;
}

Options parse(int argc, char **argv) {
  Options o;
  const char *env = std::getenv("SOBAS_RING");
  if (env) o.ring = env;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto val = [&]() {
      if (!v) {
        std::fprintf(stderr, "sobas-top: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      i++;
      return v;
    };
    if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (a == "-V" || a == "--version") {
      std::printf("sobas-top %s\n", SOBAS_VERSION);
      std::exit(0);
    } else if (a == "--ring") o.ring = val();
    else if (a == "-d") o.delay = seconds_arg("-d", val());
    else if (a == "-b") o.batch = true;
    else if (a == "-n") {
      const char *n = val();
      char *end = nullptr;
      long k = std::strtol(n, &end, 10);
      if (!*n || *end || k < 1) {
        std::fprintf(stderr, "sobas-top: -n needs a whole number above 0, got '%s'\n", n);
        std::exit(2);
      }
      o.iterations = k;
    } else if (a == "--once") o.batch = true, o.iterations = 1;
    else if (a == "--json") o.json = true;
    else if (a == "--follow") o.follow = true;
    else if (a == "--prometheus") o.prometheus = val();
    else if (a == "--stale") o.stale = seconds_arg("--stale", val());
    else if (a == "--columns") o.columns = columns_arg(val());
    else {
      std::fprintf(stderr, "sobas-top: unknown option '%s'\n", a.c_str());
      usage(stderr);
      std::exit(2);
    }
  }
  if (o.json && !o.follow) o.batch = true;
  return o;
}

void nap(double seconds) {
  timespec ts{time_t(seconds), long((seconds - double(time_t(seconds))) * 1e9)};
  while (!g_stop && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Batch, JSON and follow modes: no terminal control at all.
int run_plain(const Options &o, Monitor &m) {
  signal(SIGHUP, SIG_IGN);
  bool first = true;
  std::string said;
  for (long done = 0; !g_stop && (o.iterations < 0 || done < o.iterations); done++) {
    if (!first) nap(o.follow ? 0.1 : o.delay);
    std::string err = m.poll();
    if (!err.empty() && first) {
      std::fprintf(stderr, "sobas-top: %s\n", err.c_str());
      return 1;
    }
    first = false;
    if (!err.empty()) {  // the ring went away mid-run: say so once, keep showing what was read, retry
      if (err != said) std::fprintf(stderr, "sobas-top: %s (retrying)\n", err.c_str());
      said = err;
    } else {
      said.clear();
    }
    if (!o.prometheus.empty()) {
      std::string perr = m.write_prometheus(o.prometheus);
      if (!perr.empty()) {
        std::fprintf(stderr, "sobas-top: %s\n", perr.c_str());
        return 1;
      }
    }
    if (o.follow) {
      if (o.iterations >= 0) done--;  // -n counts refreshes of tables, not polls of the event stream
      continue;
    }
    if (o.json) m.print_json(stdout, C_RATE, true);
    else m.print_table(stdout, C_RATE, true, true, o.columns.empty() ? all_columns() : o.columns);
  }
  return 0;
}

int run_interactive(const Options &o, Monitor &m) {
  std::setlocale(LC_ALL, "");
  initscr();
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  halfdelay(std::max(1, std::min(255, int(o.delay * 10))));
  int sort = C_RATE, top = 0;  // top: the first flow on screen (scrolled)
  bool reverse = true, bits = true, paused = false, help = false, wide = false;
  const std::vector<int> narrow = o.columns.empty() ? kNarrow : o.columns, all = all_columns();
  std::string filter, err;
  long done = 0;
  while (!g_stop && (o.iterations < 0 || done < o.iterations)) {
    if (!paused) {
      err = m.poll();
      if (err.empty() && !o.prometheus.empty()) err = m.write_prometheus(o.prometheus);
      done++;
    }
    erase();
    int rows = LINES, cols = COLS, page = std::max(1, rows - 3);
    const std::vector<int> &shown = wide ? all : narrow;
    std::vector<Flow> flows = m.rows(sort, reverse, filter, bits);
    top = std::max(0, std::min(top, int(flows.size()) - page));
    mvaddnstr(0, 0, m.header_line(bits).c_str(), cols);
    char status[280], range[80] = "";
    if (int(flows.size()) > page)
      std::snprintf(range, sizeof range, "  rows %d-%d of %zu", top + 1, std::min<int>(top + page, int(flows.size())),
                    flows.size());
    std::snprintf(status, sizeof status, "sort %s%s  %s%s  %s%s%s", kHeads[sort], reverse ? " (desc)" : "",
                  bits ? "bits" : "bytes", range, paused ? "PAUSED  " : "", filter.empty() ? "" : "filter: ",
                  filter.c_str());
    mvaddnstr(1, 0, status, cols);
    // Each column at its width; the last one shown takes what the screen has left.
    auto width = [&](size_t i, int x) { return i + 1 == shown.size() ? cols - x : std::min(kWidths[shown[i]], cols - x); };
    if (!err.empty()) {
      attron(A_BOLD);
      mvaddnstr(3, 0, err.c_str(), cols);
      attroff(A_BOLD);
    } else {
      int x = 0;
      attron(A_REVERSE);
      for (size_t i = 0; i < shown.size() && x < cols; i++) {
        std::string h = kHeads[shown[i]];
        if (shown[i] == sort) h += reverse ? "v" : "^";
        mvaddnstr(2, x, h.c_str(), std::max(0, width(i, x)));
        x += kWidths[shown[i]] + 1;
      }
      attroff(A_REVERSE);
      for (int y = 3, k = top; y < rows && k < int(flows.size()); y++, k++) {
        x = 0;
        for (size_t i = 0; i < shown.size() && x < cols; i++) {
          mvaddnstr(y, x, cell(flows[size_t(k)], shown[i], bits).c_str(), std::max(0, width(i, x)));
          x += kWidths[shown[i]] + 1;
        }
      }
    }
    if (help) {
      const char *lines[] = {"< >  move the sort column", "r    reverse the order", "b    bits / bytes",
                             "c    all columns / those that fit", "arrows, PgUp, PgDn, Home, End  scroll",
                             "/    filter (program, address, pid, state; any case); empty clears", "p    pause",
                             "h    this help", "q    quit"};
      for (int i = 0; i < 9 && 4 + i < rows; i++) mvaddnstr(4 + i, 4, lines[i], cols - 4);
    }
    refresh();
    int ch = getch();
    switch (ch) {
      case 'q': g_stop = 1; break;
      case '<': case KEY_LEFT: sort = (sort + N_COLS - 1) % N_COLS; break;
      case '>': case KEY_RIGHT: sort = (sort + 1) % N_COLS; break;
      case 'r': reverse = !reverse; break;
      case 'b': bits = !bits; break;
      case 'c': wide = !wide; break;
      case 'p': case ' ': paused = !paused; break;
      case 'h': case '?': help = !help; break;
      case KEY_UP: top--; break;
      case KEY_DOWN: top++; break;
      case KEY_PPAGE: top -= page; break;
      case KEY_NPAGE: top += page; break;
      case KEY_HOME: top = 0; break;
      case KEY_END: top = int(flows.size()); break;
      case '/': {
        echo();
        nocbreak();
        cbreak();
        curs_set(1);
        mvaddstr(rows - 1, 0, "filter: ");
        clrtoeol();
        char buf[128] = "";
        getnstr(buf, sizeof buf - 1);
        filter = buf;
        top = 0;
        noecho();
        curs_set(0);
        halfdelay(std::max(1, std::min(255, int(o.delay * 10))));
        break;
      }
      default: break;
    }
  }
  endwin();
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  char path[600];
  if (sobas_ring_path(path, sizeof path, o.ring.empty() ? nullptr : o.ring.c_str(), unsigned(geteuid())) != 0) {
    std::fprintf(stderr, "sobas-top: --ring '%s' is not a name or an absolute path\n", o.ring.c_str());
    return 2;
  }
  struct sigaction sa{};
  sa.sa_handler = [](int) { g_stop = 1; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  Monitor m(o, path);
  bool interactive = !o.batch && !o.follow && isatty(1);
  return interactive ? run_interactive(o, m) : run_plain(o, m);
}
