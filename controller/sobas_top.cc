// sobas_top.cc — sobas-top: the live monitor of every preloaded flow of the user, read from the shared-memory decision ring.
#include <curses.h>
#include <getopt.h>
#include <glob.h>
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
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "clocks.h"
#include "ring_file.h"
#include "measure.h"
#include "sobas/engine.h"
#include "sobas/policy.h"
#include "sobas/ring.h"

namespace {

// JSON objects keep their keys in the order written: a person reads the lines too.
using Json = nlohmann::ordered_json;
// The version of --json's line format: bumped when a key changes meaning or goes away.
constexpr int kJsonSchema = 1;

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
    case SOBAS_LIMIT_PEER_WINDOW:
      // sobasd here saw the receiver's probe: its window is the receiver's sobas steering.
      return r.why == SOBAS_WHY_PEER_PROBE ? "peer's window (its sobas steers)" : "peer's window";
    case SOBAS_LIMIT_SNDBUF: return "send buffer";
    case SOBAS_LIMIT_PATH: return "path (cwnd)" + beside;
    case SOBAS_LIMIT_RCV_WINDOW: return "receive window";
    case SOBAS_LIMIT_SENDER_OR_PATH:
      return r.why == SOBAS_WHY_PEER_SENDER ? "sender (its sobas steers)" : "sender or path" + beside;
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

// One flow as the latest record describes it, and the user whose ring it came from.
struct Flow {
  sobas_ring_record r{};
  unsigned uid = 0;
};

// What one user's ring has told this reader since it started.
struct Stats {
  uint64_t records = 0, closed = 0;
  uint64_t received = 0, sent = 0;  // bytes, summed over the flows' records (counters)
  std::map<std::string, uint64_t> decisions_by_reason;
};

// A flow across rings: a pid is unique on the machine, but two users' rings are read side by side.
using FlowKey = std::tuple<unsigned, uint32_t, uint64_t>;

// The ring, mapped read-only, and this reader's cursor over it.
class Ring {
 public:
  // `owner`: another user's ring, read by root (--all-users); -1: this user's own.
  Ring(std::string path, long owner) : path_(std::move(path)), owner_(owner) {}
  ~Ring() { unmap(); }
  Ring(const Ring &) = delete;
  Ring &operator=(const Ring &) = delete;

  // Maps the ring if needed; a ring removed or replaced under it is mapped afresh and read from its
  // oldest record. While mapped, the old file keeps its inode number, so a new one differs; once
  // unmapped, ext4 hands that number to the next file, so any mapping after the first is a new ring.
  // Returns "" or what is wrong.
  std::string attach() {
    struct stat st;
    if (base_ && stat(path_.c_str(), &st) == 0 && uint64_t(st.st_ino) == ino_) return "";
    unmap();
    char err[640] = "";
    int r = owner_ < 0 ? sobas_ring_open(path_.c_str(), 0, &map_, &base_, &size_, &ino_, err, sizeof err)
                       : sobas_ring_open_of(path_.c_str(), unsigned(owner_), &map_, &base_, &size_, &ino_, err, sizeof err);
    if (r != 0) {
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
  long owner_;
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
  bool all_users = false;  // root: every user's ring in /dev/shm, read-only
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

// Where --all-users looks: the rings the shim writes by default, one per user.
constexpr const char *kRingGlob = "/dev/shm/sobas-*.ring";

class Monitor {
 public:
  // One user's ring at `path`, or with o.all_users every ring matching kRingGlob.
  Monitor(const Options &o, std::string path) : o_(o) {
    if (!o.all_users) rings_.emplace(std::piecewise_construct, std::forward_as_tuple(unsigned(geteuid())),
                                     std::forward_as_tuple(std::move(path), -1));
  }

  // Reads every new record into the flow table; returns "" or what is wrong with the ring(s). With
  // --all-users, only "there is no ring at all" is an error: a user's ring that is gone or refused
  // leaves its flows on show until they age out.
  std::string poll() {
    if (o_.all_users) discover();
    std::string err;
    size_t attached = 0;
    for (auto &kv : rings_) {
      std::string e = kv.second.attach();
      if (!e.empty()) {
        if (err.empty()) err = e;
        continue;
      }
      attached++;
      sobas_ring_record r;
      while (kv.second.read(&r)) take(kv.first, r);
    }
    if (o_.all_users && rings_.empty()) err = std::string("no ring matches ") + kRingGlob + " yet";
    // A closed flow stays on show for kLingerS (its final byte count), then goes; a flow whose process
    // died without a close record ages out after --stale, both by the time of its last record.
    int64_t now = real_ns();
    for (auto it = flows_.begin(); it != flows_.end();) {
      double keep = it->second.r.event == SOBAS_EV_CLOSE ? kLingerS : o_.stale;
      it = now - it->second.r.t_ns > int64_t(keep * 1e9) ? flows_.erase(it) : std::next(it);
    }
    return o_.all_users && attached ? "" : err;
  }

  void take(unsigned uid, const sobas_ring_record &r) {
    Stats &st = stats_[uid];
    st.records++;
    if (r.event == SOBAS_EV_DECISION) st.decisions_by_reason[sobas_reason_name(sobas_reason(r.why))]++;
    if (o_.follow) print_event(uid, r);
    FlowKey key{uid, r.pid, r.flow_id};
    count_bytes(st, key, r);
    if (r.event == SOBAS_EV_CLOSE) st.closed++;
    flows_[key] = Flow{r, uid};
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
    uint64_t records = 0, lost = 0, torn = 0, dropped = 0;
    unsigned recreated = 0;
    for (const auto &kv : stats_) records += kv.second.records;
    for (const auto &kv : rings_)
      lost += kv.second.lost(), torn += kv.second.torn(), dropped += kv.second.dropped(),
          recreated += kv.second.recreated();
    char b[360], c[40] = "", u[40] = "";
    if (closed) std::snprintf(c, sizeof c, " (+%zu just closed)", closed);
    if (o_.all_users) std::snprintf(u, sizeof u, "  %zu user ring%s", rings_.size(), rings_.size() == 1 ? "" : "s");
    std::snprintf(b, sizeof b, "sobas-top  %zu flow%s%s  total %s  records %" PRIu64 "  lost %" PRIu64 "  torn %" PRIu64
                  "  writer-dropped %" PRIu64 "%s%s",
                  open, open == 1 ? "" : "s", c, human(bits ? total : total / 8, bits, "b/s", "B/s").c_str(), records,
                  lost, torn, dropped, u, recreated ? "  (ring recreated)" : "");
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

  // One JSON line. A program name is any bytes a process chose, cut at 15: what is not UTF-8 becomes
  // U+FFFD, never an escape per byte.
  static std::string line(const Json &j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

  // A record as a JSON object: `type` "flow" (a refresh's view of a flow) or "record" (--follow).
  static Json record_json(const char *type, unsigned uid, const sobas_ring_record &r, int64_t ts_ns) {
    Json j;
    j["schema"] = kJsonSchema;
    j["type"] = type;
    j["ts"] = double(ts_ns / 1000000) / 1e3;  // milliseconds: the ring's clock is no finer than a window
    j["event"] = event_name(r.event);
    j["uid"] = uid;
    j["pid"] = r.pid;
    j["program"] = comm_of(r);
    j["flow"] = r.flow_id;
    j["role"] = role_name(r.role);
    j["local"] = addr_text(r.family, r.laddr, r.lport);
    j["remote"] = addr_text(r.family, r.raddr, r.rport);
    j["state"] = state_name(r.state);
    j["why"] = r.why ? sobas_reason_name(sobas_reason(r.why)) : "-";
    j["rate_bps"] = r.rate_bps;
    j["rtt_us"] = r.rtt_us;
    j["base_rtt_us"] = r.base_rtt_us;
    j["s_bytes"] = r.s_bytes;
    j["rcv_wnd"] = r.rcv_wnd;
    j["bytes_received"] = r.bytes_received;
    j["bytes_acked"] = r.bytes_acked;
    j["app_bytes"] = r.app_bytes;
    j["retrans"] = r.retrans;
    j["lost"] = r.lost;
    j["age_ms"] = r.age_ms;
    j["probe"] = probe_name(r.probe);
    j["cap_bps"] = r.cap_bps;
    j["lever"] = lever_name(r.lever);
    j["policy"] = sobas_policy_name(sobas_policy(r.policy));
    j["limit"] = sobas_limit_name(sobas_limit(r.limit));
    j["limited_by"] = limit_of(r);
    return j;
  }

  // One refresh: a "flow" line per flow, then a "refresh" line that closes it (iperf3's --json-stream
  // habit): a reader knows the snapshot is whole, and an empty one still says so.
  void print_json(FILE *out, int sort, bool reverse) {
    int64_t now = real_ns();
    std::vector<Flow> flows = rows(sort, reverse, "", true);
    refresh_++;
    for (const Flow &f : flows) {
      Json j = record_json("flow", f.uid, f.r, now);
      j["refresh"] = refresh_;
      std::fprintf(out, "%s\n", line(j).c_str());
    }
    Json end;
    end["schema"] = kJsonSchema;
    end["type"] = "refresh";
    end["ts"] = double(now / 1000000) / 1e3;
    end["refresh"] = refresh_;
    end["flows"] = flows.size();
    std::fprintf(out, "%s\n", line(end).c_str());
    std::fflush(out);
  }

  void print_event(unsigned uid, const sobas_ring_record &r) const {
    if (o_.json) std::printf("%s\n", line(record_json("record", uid, r, r.t_ns)).c_str());
    else
      std::printf("%.3f %-8s pid=%u %s flow=%" PRIu64 " %s -> %s state=%s why=%s rate=%s s=%" PRIu64 " rtt_us=%u probe=%s\n",
                  r.t_ns / 1e9, event_name(r.event), r.pid, comm_of(r).c_str(), r.flow_id,
                  addr_text(r.family, r.laddr, r.lport).c_str(), addr_text(r.family, r.raddr, r.rport).c_str(),
                  state_name(r.state).c_str(), r.why ? sobas_reason_name(sobas_reason(r.why)) : "-",
                  human(double(r.rate_bps), true, "b/s", "B/s").c_str(), r.s_bytes, r.rtt_us, probe_name(r.probe));
    std::fflush(stdout);
  }

  // node_exporter textfile collector format, written to a temporary name and renamed. Every series has
  // a uid label (the ring's user), so one root reader (--all-users) can serve the whole machine.
  std::string write_prometheus(const std::string &path) const {
    std::string tmp = path + ".tmp";
    {
      std::ofstream o(tmp);
      if (!o) return "cannot write " + tmp;
      o.precision(15);  // byte rates whole, not in 6 significant digits
      // Every state and limit has its series for every user, 0 included: a series that appears and
      // vanishes breaks rate() and alerts on absent().
      std::map<std::pair<unsigned, std::string>, int> by_state, by_limit;
      std::map<std::pair<unsigned, std::string>, double> rate_by_state;
      for (unsigned uid : users()) {
        for (int s = 0; s <= SOBAS_ST_CONGESTED; s++)
          by_state[{uid, state_name(uint8_t(s))}] = 0, rate_by_state[{uid, state_name(uint8_t(s))}] = 0;
        for (int l = 0; l <= SOBAS_LIMIT_SENDER_OR_PATH; l++) by_limit[{uid, sobas_limit_name(sobas_limit(l))}] = 0;
      }
      for (const auto &kv : flows_) {
        const Flow &f = kv.second;
        if (f.r.event == SOBAS_EV_CLOSE) continue;  // on show a while, but no longer a flow
        std::string st = state_name(f.r.state);
        by_state[{f.uid, st}]++;
        by_limit[{f.uid, sobas_limit_name(sobas_limit(f.r.limit))}]++;
        rate_by_state[{f.uid, st}] += double(f.r.rate_bps) / 8;
      }
      auto uid_label = [](unsigned uid) { return "uid=\"" + std::to_string(uid) + "\""; };
      auto family = [&](const char *name, const char *type, const char *help) {
        o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
      };
      family("sobas_build_info", "gauge", "The sobas-top that wrote this file.");
      o << "sobas_build_info{version=\"" << SOBAS_VERSION << "\"} 1\n";
      family("sobas_flows", "gauge", "Bulk TCP flows of preloaded programs, by SOBAS engine state.");
      for (const auto &kv : by_state)
        o << "sobas_flows{" << uid_label(kv.first.first) << ",state=\"" << kv.first.second << "\"} " << kv.second << "\n";
      family("sobas_flows_limited", "gauge", "Bulk TCP flows by what held them back in their last window.");
      for (const auto &kv : by_limit)
        o << "sobas_flows_limited{" << uid_label(kv.first.first) << ",limit=\"" << kv.first.second << "\"} " << kv.second
          << "\n";
      family("sobas_flow_rate_bytes_per_second", "gauge", "Sum of the flows' last measured rates, by state.");
      for (const auto &kv : rate_by_state)
        o << "sobas_flow_rate_bytes_per_second{" << uid_label(kv.first.first) << ",state=\"" << kv.first.second << "\"} "
          << kv.second << "\n";
      family("sobas_decisions_total", "counter", "Engine decisions read from the ring, by reason.");
      for (const auto &u : stats_)
        for (const auto &kv : u.second.decisions_by_reason)
          o << "sobas_decisions_total{" << uid_label(u.first) << ",reason=\"" << kv.first << "\"} " << kv.second << "\n";
      // Per-user counters, then the ring's own.
      auto per_user = [&](const char *name, const char *help, auto value) {
        family(name, "counter", help);
        for (unsigned uid : users()) o << name << "{" << uid_label(uid) << "} " << value(uid) << "\n";
      };
      auto stat = [&](unsigned uid) -> Stats {
        auto it = stats_.find(uid);
        return it == stats_.end() ? Stats{} : it->second;
      };
      auto ring = [&](unsigned uid) -> const Ring * {
        auto it = rings_.find(uid);
        return it == rings_.end() ? nullptr : &it->second;
      };
      per_user("sobas_received_bytes_total", "Bytes the flows received, summed over their records since this reader started.",
               [&](unsigned u) { return stat(u).received; });
      per_user("sobas_sent_bytes_total", "Bytes the flows sent and had acknowledged, summed over their records since this reader started.",
               [&](unsigned u) { return stat(u).sent; });
      per_user("sobas_flows_closed_total", "Flows whose close was read from the ring.",
               [&](unsigned u) { return stat(u).closed; });
      per_user("sobas_ring_records_total", "Records read from the ring.", [&](unsigned u) { return stat(u).records; });
      per_user("sobas_ring_records_lost_total", "Records overwritten or never completed before this reader got them.",
               [&](unsigned u) { return ring(u) ? ring(u)->lost() : 0; });
      per_user("sobas_ring_records_torn_total", "Records that changed under the copy or failed their check.",
               [&](unsigned u) { return ring(u) ? ring(u)->torn() : 0; });
      per_user("sobas_ring_writer_dropped_total", "Records writers gave up because their slot was busy.",
               [&](unsigned u) { return ring(u) ? ring(u)->dropped() : 0; });
      if (!o.flush()) return "cannot write " + tmp;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) return "cannot rename " + tmp + " to " + path;
    return "";
  }

  size_t flow_count() const { return flows_.size(); }

 private:
  // --all-users: a ring per user, found by its default name, checked to be that user's when mapped.
  void discover() {
    glob_t g{};
    if (glob(kRingGlob, 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; i++) {
        unsigned uid;
        char tail;
        if (std::sscanf(g.gl_pathv[i], "/dev/shm/sobas-%u.rin%c", &uid, &tail) != 2 || tail != 'g') continue;
        if (!rings_.count(uid))
          rings_.emplace(std::piecewise_construct, std::forward_as_tuple(uid),
                         std::forward_as_tuple(g.gl_pathv[i], long(uid)));
      }
    }
    globfree(&g);
  }

  // The users this reader has a ring or a record of.
  std::vector<unsigned> users() const {
    std::vector<unsigned> u;
    for (const auto &kv : rings_) u.push_back(kv.first);
    for (const auto &kv : stats_)
      if (!rings_.count(kv.first)) u.push_back(kv.first);
    return u;
  }

  // Bytes moved since the flow's previous record (the records carry totals): a counter that only
  // grows, whatever the flow table forgets. A flow's last totals are kept until its close.
  void count_bytes(Stats &st, const FlowKey &key, const sobas_ring_record &r) {
    auto &last = last_bytes_[key];
    if (r.bytes_received >= last.first) st.received += r.bytes_received - last.first;
    if (r.bytes_acked >= last.second) st.sent += r.bytes_acked - last.second;
    last = {std::max(last.first, r.bytes_received), std::max(last.second, r.bytes_acked)};
    if (r.event == SOBAS_EV_CLOSE) last_bytes_.erase(key);
  }

  const Options &o_;
  std::map<unsigned, Ring> rings_;
  std::map<FlowKey, Flow> flows_;
  std::map<FlowKey, std::pair<uint64_t, uint64_t>> last_bytes_;
  std::map<unsigned, Stats> stats_;
  uint64_t refresh_ = 0;
};

volatile sig_atomic_t g_stop = 0;

void usage(FILE *to) {
  std::fprintf(to,
               "usage: sobas-top [options]\n"
               "Live table of the bulk TCP flows of this user's preloaded programs, from the decision ring.\n"
               "  --ring PATH|NAME  the ring (default: $SOBAS_RING, else /dev/shm/sobas-UID.ring)\n"
               "  --all-users       root: every user's ring in /dev/shm, read-only (uid in --json and metrics)\n"
               "  -d SECONDS        refresh interval (default 1)\n"
               "  -b                batch: plain text tables, no escape codes (survives SIGHUP)\n"
               "  -n N              N refreshes, then exit\n"
               "  --once            one table of what the ring holds now, then exit (-b -n 1)\n"
               "  --json            JSON Lines instead of tables: per refresh, a \"flow\" object per flow, then a\n"
               "                    \"refresh\" object closing it (each line has schema and type)\n"
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

long count_arg(const char *opt, const char *v) {
  char *end = nullptr;
  long k = std::strtol(v, &end, 10);
  if (!*v || *end || k < 1) {
    std::fprintf(stderr, "sobas-top: %s needs a whole number above 0, got '%s'\n", opt, v);
    std::exit(2);
  }
  return k;
}

// The option getopt_long just refused: a short one by its letter (it may sit in a bundle such as -bx),
// a long one as written.
std::string option_name(char **argv) {
  if (optopt > 0 && optopt < 128) return std::string("-") + char(optopt);
  return argv[optind - 1];
}

Options parse(int argc, char **argv) {
  Options o;
  const char *env = std::getenv("SOBAS_RING");
  if (env) o.ring = env;
  enum { O_RING = 256, O_ONCE, O_JSON, O_FOLLOW, O_PROM, O_STALE, O_COLUMNS, O_ALL_USERS };
  static const option longs[] = {{"help", no_argument, nullptr, 'h'},
                                 {"version", no_argument, nullptr, 'V'},
                                 {"ring", required_argument, nullptr, O_RING},
                                 {"all-users", no_argument, nullptr, O_ALL_USERS},
                                 {"once", no_argument, nullptr, O_ONCE},
                                 {"json", no_argument, nullptr, O_JSON},
                                 {"follow", no_argument, nullptr, O_FOLLOW},
                                 {"prometheus", required_argument, nullptr, O_PROM},
                                 {"stale", required_argument, nullptr, O_STALE},
                                 {"columns", required_argument, nullptr, O_COLUMNS},
                                 {nullptr, 0, nullptr, 0}};
  bool ring_given = false;
  opterr = 0;  // our own messages, naming the program the way its other errors do
  for (int c; (c = getopt_long(argc, argv, ":hVd:bn:", longs, nullptr)) != -1;) {
    switch (c) {
      case 'h': usage(stdout); std::exit(0);
      case 'V': std::printf("sobas-top %s\n", SOBAS_VERSION); std::exit(0);
      case O_RING: o.ring = optarg, ring_given = true; break;
      case O_ALL_USERS: o.all_users = true; break;
      case 'd': o.delay = seconds_arg("-d", optarg); break;
      case 'b': o.batch = true; break;
      case 'n': o.iterations = count_arg("-n", optarg); break;
      case O_ONCE: o.batch = true, o.iterations = 1; break;
      case O_JSON: o.json = true; break;
      case O_FOLLOW: o.follow = true; break;
      case O_PROM: o.prometheus = optarg; break;
      case O_STALE: o.stale = seconds_arg("--stale", optarg); break;
      case O_COLUMNS: o.columns = columns_arg(optarg); break;
      case ':':
        std::fprintf(stderr, "sobas-top: %s needs a value\n", option_name(argv).c_str());
        std::exit(2);
      default:
        std::fprintf(stderr, "sobas-top: unknown option '%s'\n", option_name(argv).c_str());
        usage(stderr);
        std::exit(2);
    }
  }
  if (optind < argc) {
    std::fprintf(stderr, "sobas-top: unexpected argument '%s'\n", argv[optind]);
    usage(stderr);
    std::exit(2);
  }
  if (o.all_users && ring_given) {
    std::fprintf(stderr, "sobas-top: --all-users reads every user's default ring; it takes no --ring\n");
    std::exit(2);
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
  if (o.all_users && geteuid() != 0)
    std::fprintf(stderr, "sobas-top: --all-users without root reads only the rings this user may open\n");
  Monitor m(o, path);
  bool interactive = !o.batch && !o.follow && isatty(1);
  return interactive ? run_interactive(o, m) : run_plain(o, m);
}
