// ring_test.cc — the decision ring: its ABI pinned in C and C++, the seqlock writer/reader on one thread, and the ring file's placement rules.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ring_file.h"
#include "sobas/ring.h"

extern "C" const size_t sobas_ring_layout_c[];
extern "C" const size_t sobas_ring_layout_c_n;

namespace {

#define OFF(t, f) offsetof(t, f)
// The ABI: these numbers are what readers of other builds rely on; changing one is a new major.
const size_t kPinned[] = {
    4096, 8,   12,  20,  24,  32,  64,  128, 136, 256, 0,   8,   16,  24,  32,  40,
    56,   63,  64,  68,  84,  100, 101, 104, 144, 152, 172, 176, 192, 32,  8,   16,  24,  28,
};
const size_t kCxx[] = {
    sizeof(sobas_ring_header),          OFF(sobas_ring_header, abi_major), OFF(sobas_ring_header, header_size),
    OFF(sobas_ring_header, capacity),   OFF(sobas_ring_header, created_ns), OFF(sobas_ring_header, owner_uid),
    OFF(sobas_ring_header, ticket),     OFF(sobas_ring_header, dropped),   OFF(sobas_ring_header, stolen),
    sizeof(sobas_ring_record),          OFF(sobas_ring_record, seq),       OFF(sobas_ring_record, check),
    OFF(sobas_ring_record, t_ns),       OFF(sobas_ring_record, pid),       OFF(sobas_ring_record, flow_id),
    OFF(sobas_ring_record, comm),       OFF(sobas_ring_record, event),     OFF(sobas_ring_record, lever),
    OFF(sobas_ring_record, lport),      OFF(sobas_ring_record, laddr),     OFF(sobas_ring_record, raddr),
    OFF(sobas_ring_record, limit),      OFF(sobas_ring_record, policy),    OFF(sobas_ring_record, rate_bps),   OFF(sobas_ring_record, cap_bps),   OFF(sobas_ring_record, rtt_us),
    OFF(sobas_ring_record, age_ms),     OFF(sobas_ring_record, pad),
    OFF(sobas_ring_header, board),      sizeof(sobas_ring_board_slot),     OFF(sobas_ring_board_slot, path),
    OFF(sobas_ring_board_slot, seen_ns), OFF(sobas_ring_board_slot, reserved), OFF(sobas_ring_board_slot, searching),
};
static_assert(sizeof(sobas_ring_header) == SOBAS_RING_HEADER_SIZE, "header is one page");
static_assert(sizeof(sobas_ring_record) == SOBAS_RING_RECORD_SIZE, "record size");
static_assert(offsetof(sobas_ring_header, ticket) % 64 == 0 && offsetof(sobas_ring_header, dropped) % 64 == 0,
              "the write ticket and the writers' counters start cache lines");

TEST(RingAbi, CAndCxxAgreeWithThePinnedLayout) {
  ASSERT_EQ(sobas_ring_layout_c_n, sizeof kPinned / sizeof kPinned[0]);
  ASSERT_EQ(sizeof kCxx / sizeof kCxx[0], sizeof kPinned / sizeof kPinned[0]);
  for (size_t i = 0; i < sobas_ring_layout_c_n; i++) {
    EXPECT_EQ(sobas_ring_layout_c[i], kPinned[i]) << "C, entry " << i;
    EXPECT_EQ(kCxx[i], kPinned[i]) << "C++, entry " << i;
  }
}

// A ring in ordinary memory (aligned like a mapping).
struct Mem {
  std::vector<uint64_t> words;
  sobas_ring_map m{};
  explicit Mem(uint32_t capacity = SOBAS_RING_CAPACITY)
      : words((SOBAS_RING_HEADER_SIZE + size_t(capacity) * SOBAS_RING_RECORD_SIZE) / 8) {
    auto *h = reinterpret_cast<sobas_ring_header *>(words.data());
    sobas_ring_init(h, 1000, 42);
    h->capacity = capacity;
    EXPECT_EQ(sobas_ring_validate(h, words.size() * 8, &m), nullptr);
  }
  sobas_ring_record *slot(uint64_t n) {
    return reinterpret_cast<sobas_ring_record *>(reinterpret_cast<char *>(m.h) + SOBAS_RING_HEADER_SIZE +
                                                 (n % m.capacity) * SOBAS_RING_RECORD_SIZE);
  }
};

sobas_ring_record rec(uint32_t pid, uint64_t flow) {
  sobas_ring_record r{};
  r.pid = pid;
  r.flow_id = flow;
  r.event = SOBAS_EV_SAMPLE;
  r.rate_bps = flow * 1000;
  std::strcpy(r.comm, "curl");
  return r;
}

TEST(Ring, WrittenRecordsReadBackInOrder) {
  Mem mem(16);
  for (uint64_t i = 0; i < 10; i++) {
    auto r = rec(7, i);
    sobas_ring_write(&mem.m, &r);
  }
  sobas_ring_cursor c;
  sobas_ring_cursor_oldest(&mem.m, &c);
  sobas_ring_record out;
  for (uint64_t i = 0; i < 10; i++) {
    ASSERT_EQ(sobas_ring_read(&mem.m, &c, &out, 1), 1);
    EXPECT_EQ(out.flow_id, i);
    EXPECT_EQ(out.rate_bps, i * 1000);
    EXPECT_STREQ(out.comm, "curl");
    EXPECT_EQ(out.seq, 2 * i + 2);
  }
  EXPECT_EQ(sobas_ring_read(&mem.m, &c, &out, 1), 0);
  EXPECT_EQ(c.lost + c.torn, 0u);
}

TEST(Ring, ReaderLappedCountsExactlyWhatItLost) {
  Mem mem(16);
  for (uint64_t i = 0; i < 16 + 10; i++) {
    auto r = rec(7, i);
    sobas_ring_write(&mem.m, &r);
  }
  sobas_ring_cursor c{};  // at record 0, now 10 records overwritten
  sobas_ring_record out;
  uint64_t got = 0;
  while (sobas_ring_read(&mem.m, &c, &out, 1) == 1) EXPECT_EQ(out.flow_id, 10 + got++);
  EXPECT_EQ(got, 16u);
  EXPECT_EQ(c.lost, 10u);
}

TEST(Ring, ACorruptedRecordIsNeverAccepted) {
  Mem mem(16);
  for (uint64_t i = 0; i < 3; i++) {
    auto r = rec(7, i);
    sobas_ring_write(&mem.m, &r);
  }
  mem.slot(1)->rate_bps ^= 1;  // a byte another writer scribbled after publishing
  sobas_ring_cursor c{};
  sobas_ring_record out;
  ASSERT_EQ(sobas_ring_read(&mem.m, &c, &out, 1), 1);
  EXPECT_EQ(out.flow_id, 0u);
  ASSERT_EQ(sobas_ring_read(&mem.m, &c, &out, 1), 1);
  EXPECT_EQ(out.flow_id, 2u) << "record 1 failed its check and was skipped";
  EXPECT_EQ(c.torn, 1u);
}

// A writer killed mid-write leaves its slot odd: readers wait a while, then count it lost and go on;
// the next writers a lap later give up that slot until it is two laps stale, then take it back.
TEST(Ring, AWriterKilledMidWriteCostsOneRecord) {
  Mem mem(4);
  auto r = rec(7, 0);
  sobas_ring_write(&mem.m, &r);               // record 0
  mem.m.h->ticket++;                          // record 1: a writer took its ticket...
  mem.slot(1)->seq = 2 * 1 + 1;               // ...claimed the slot, and died
  r = rec(7, 2);
  sobas_ring_write(&mem.m, &r);               // record 2
  sobas_ring_cursor c{};
  sobas_ring_record out;
  ASSERT_EQ(sobas_ring_read(&mem.m, &c, &out, 1000), 1);
  EXPECT_EQ(sobas_ring_read(&mem.m, &c, &out, 2000), 0) << "incomplete: wait";
  EXPECT_EQ(sobas_ring_read(&mem.m, &c, &out, 2000 + SOBAS_RING_STALE_NS / 2), 0);
  ASSERT_EQ(sobas_ring_read(&mem.m, &c, &out, 2000 + SOBAS_RING_STALE_NS), 1) << "stale: skipped";
  EXPECT_EQ(out.flow_id, 2u);
  EXPECT_EQ(c.lost, 1u);
  // Record 5 lands on the dead slot one lap later: given up. Record 9, two laps later, takes it back.
  for (uint64_t i = 3; i <= 9; i++) {
    r = rec(7, i);
    sobas_ring_write(&mem.m, &r);
  }
  EXPECT_EQ(mem.m.h->dropped, 1u);
  EXPECT_EQ(mem.m.h->stolen, 1u);
  EXPECT_EQ(mem.slot(9)->seq, 2u * 9 + 2) << "the slot works again";
}

// The path board: flows on one path see each other, whatever process they are in; other paths, gone
// flows (left, or not seen for 2 s) and the flow itself are not counted; a full board still counts.
TEST(RingBoard, FlowsOnOnePathSeeEachOther) {
  Mem mem;
  sobas_ring_header *h = mem.m.h;
  const uint8_t a4[16] = {10, 80, 2, 1}, b4[16] = {10, 80, 2, 2};
  const uint64_t a = sobas_ring_board_path(2, a4), b = sobas_ring_board_path(2, b4);
  ASSERT_NE(a, b);
  ASSERT_NE(sobas_ring_board_path(10, a4), a) << "the family is part of the path";
  const int64_t t = 5000000000;
  uint32_t s1 = 0, s2 = 0, s3 = 0, srch = 99;
  EXPECT_EQ(sobas_ring_board_report(h, 1ull << 32 | 1, a, 1, t, &s1, &srch), 0u);
  EXPECT_EQ(srch, 0u);
  ASSERT_NE(s1, 0u);
  EXPECT_EQ(sobas_ring_board_report(h, 2ull << 32 | 1, a, 0, t, &s2, &srch), 1u) << "another process's flow";
  EXPECT_EQ(srch, 1u) << "the first is searching";
  EXPECT_NE(s2, s1);
  EXPECT_EQ(sobas_ring_board_report(h, 2ull << 32 | 2, b, 1, t, &s3, &srch), 0u) << "another peer";
  const uint32_t first = s1;
  EXPECT_EQ(sobas_ring_board_report(h, 1ull << 32 | 1, a, 0, t + 1000, &s1, &srch), 1u);
  EXPECT_EQ(s1, first) << "a flow keeps its slot";
  EXPECT_EQ(srch, 0u) << "both decided";
  sobas_ring_board_leave(h, 2ull << 32 | 1, s2);
  EXPECT_EQ(sobas_ring_board_report(h, 1ull << 32 | 1, a, 0, t + 2000, &s1, &srch), 0u) << "left";
  sobas_ring_board_leave(h, 9, s1);
  EXPECT_EQ(h->board[s1 - 1].owner, 1ull << 32 | 1) << "only its owner frees a slot";

  // Gone without leaving (killed): not counted after 2 s, and its slot is taken again.
  uint32_t s4 = 0;
  sobas_ring_board_report(h, 3ull << 32 | 1, a, 1, t + 3000, &s4, &srch);
  EXPECT_EQ(sobas_ring_board_report(h, 1ull << 32 | 1, a, 0, t + 1000000000, &s1, &srch), 1u);
  EXPECT_EQ(sobas_ring_board_report(h, 1ull << 32 | 1, a, 0, t + 2500000000, &s1, &srch), 0u);
  bool reused = false;
  for (uint64_t i = 0; i + 1 < SOBAS_RING_BOARD_SLOTS; i++) {
    uint32_t s = 0;
    sobas_ring_board_report(h, 100ull << 32 | i, b, 1, t + 2500000000, &s, &srch);
    ASSERT_NE(s, 0u) << "every slot but the live flow's is free or stale: " << i;
    reused |= s == s4;
  }
  EXPECT_TRUE(reused) << "the killed flow's slot";
  uint32_t full = 0;
  EXPECT_EQ(sobas_ring_board_report(h, 200ull << 32, a, 1, t + 2500000000, &full, &srch), 1u)
      << "a full board: no slot, but its siblings still counted";
  EXPECT_EQ(full, 0u);
}

TEST(Ring, ValidateNamesWhatIsWrong) {
  Mem mem(16);
  sobas_ring_map m;
  auto *h = mem.m.h;
  size_t size = mem.words.size() * 8;
  EXPECT_NE(sobas_ring_validate(h, 100, &m), nullptr);
  h->magic ^= 1;
  EXPECT_STREQ(sobas_ring_validate(h, size, &m), "not a sobas ring (bad magic)");
  h->magic ^= 1;
  h->abi_major = 2;
  EXPECT_STREQ(sobas_ring_validate(h, size, &m), "a ring of another ABI major version");
  h->abi_major = SOBAS_RING_ABI_MAJOR;
  h->capacity = 12;
  EXPECT_STREQ(sobas_ring_validate(h, size, &m), "capacity is not a power of two up to 2^24");
  h->capacity = 32;
  EXPECT_STREQ(sobas_ring_validate(h, size, &m), "file size does not match its capacity");
  h->capacity = 16;
  EXPECT_EQ(sobas_ring_validate(h, size, &m), nullptr);
}

TEST(RingFile, PathRules) {
  char p[128];
  ASSERT_EQ(sobas_ring_path(p, sizeof p, nullptr, 1000), 0);
  EXPECT_STREQ(p, "/dev/shm/sobas-1000.ring");
  ASSERT_EQ(sobas_ring_path(p, sizeof p, "mine", 1000), 0);
  EXPECT_STREQ(p, "/dev/shm/mine");
  ASSERT_EQ(sobas_ring_path(p, sizeof p, "/tmp/x.ring", 1000), 0);
  EXPECT_STREQ(p, "/tmp/x.ring");
  EXPECT_EQ(sobas_ring_path(p, sizeof p, "rel/x", 1000), -1);
}

struct TmpDir {
  std::string dir;
  TmpDir() {
    char t[] = "/tmp/sobas-ring-test.XXXXXX";
    dir = mkdtemp(t);
  }
  ~TmpDir() { std::filesystem::remove_all(dir); }
};

TEST(RingFile, CreatesPrivatelyAndRefusesWhatIsNotOurs) {
  TmpDir t;
  std::string path = t.dir + "/ring";
  sobas_ring_map m;
  void *base;
  size_t size;
  uint64_t ino;
  char err[640];
  ASSERT_EQ(sobas_ring_open(path.c_str(), 1, &m, &base, &size, &ino, err, sizeof err), 0) << err;
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(size, sobas_ring_bytes());
  munmap(base, size);
  EXPECT_NE(sobas_ring_open((t.dir + "/missing").c_str(), 0, &m, &base, &size, &ino, err, sizeof err), 0)
      << "a reader never creates";
  std::string link = t.dir + "/link";
  ASSERT_EQ(symlink(path.c_str(), link.c_str()), 0);
  EXPECT_NE(sobas_ring_open(link.c_str(), 0, &m, &base, &size, &ino, err, sizeof err), 0);
  EXPECT_NE(std::strstr(err, "symbolic link"), nullptr) << err;
  chmod(path.c_str(), 0644);
  EXPECT_NE(sobas_ring_open(path.c_str(), 0, &m, &base, &size, &ino, err, sizeof err), 0);
  EXPECT_NE(std::strstr(err, "mode must be 0600"), nullptr) << err;
  chmod(path.c_str(), 0600);
  int fd = open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "garbage!", 8, 0), 8);
  close(fd);
  EXPECT_NE(sobas_ring_open(path.c_str(), 0, &m, &base, &size, &ino, err, sizeof err), 0);
  EXPECT_NE(std::strstr(err, "corrupt"), nullptr) << err;
}

// sobas-top --all-users: root maps another user's ring read-only, and only as that user's.
TEST(RingFile, ARootReaderOpensAnotherUsersRingOnlyAsThatUsers) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the ring to another user";
  TmpDir t;
  std::string path = t.dir + "/ring";
  sobas_ring_map m;
  void *base;
  size_t size;
  uint64_t ino;
  char err[640];
  ASSERT_EQ(sobas_ring_open(path.c_str(), 1, &m, &base, &size, &ino, err, sizeof err), 0) << err;
  munmap(base, size);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  EXPECT_NE(sobas_ring_open(path.c_str(), 0, &m, &base, &size, &ino, err, sizeof err), 0);
  EXPECT_NE(std::strstr(err, "another user"), nullptr) << err;
  ASSERT_EQ(sobas_ring_open_of(path.c_str(), 65534, &m, &base, &size, &ino, err, sizeof err), 0) << err;
  munmap(base, size);
  EXPECT_NE(sobas_ring_open_of(path.c_str(), 1000, &m, &base, &size, &ino, err, sizeof err), 0);
  EXPECT_NE(std::strstr(err, "another user"), nullptr) << err;
}

}  // namespace
