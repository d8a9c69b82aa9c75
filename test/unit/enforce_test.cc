// enforce_test.cc — the levers on a real loopback TCP connection: the hold locks the buffer and clamps the window, a release unlocks and opens it, a later hold locks it again; a sender's wake mark is set and given back; a CUBIC sender's curve restarted.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <fstream>
#include <string>

extern "C" {
#include "enforce.h"
}

namespace {

constexpr int kBufLock = 72;  // SO_BUF_LOCK (Linux 5.15): bit 1 the send buffer's lock, bit 2 the receive buffer's
constexpr int kSndLock = 1, kRcvLock = 2;

int GetInt(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof v;
  EXPECT_EQ(getsockopt(fd, level, name, &v, &len), 0) << "option " << name;
  return v;
}

std::string Cc(int fd) {
  char name[16] = {0};
  socklen_t len = sizeof name - 1;
  EXPECT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len), 0);
  return name;
}

int SetCc(int fd, const char *name) {
  return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, static_cast<socklen_t>(std::char_traits<char>::length(name)));
}

long ProcField(const char *path, int field) {
  std::ifstream f(path);
  long v = -1;
  for (int i = 0; i <= field && (f >> v); i++) {
  }
  return v;
}

// One accepted end of a loopback connection: the receiving socket the shim would hold.
class Levers : public ::testing::Test {
 protected:
  void SetUp() override {
    int lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(lst, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(bind(lst, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    ASSERT_EQ(listen(lst, 1), 0);
    ASSERT_EQ(getsockname(lst, reinterpret_cast<sockaddr *>(&a), &len), 0);
    peer_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(connect(peer_, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    fd_ = accept4(lst, nullptr, nullptr, SOCK_CLOEXEC);
    close(lst);
    ASSERT_GE(fd_, 0);
    if (GetInt(fd_, SOL_SOCKET, kBufLock) < 0) GTEST_SKIP() << "no SO_BUF_LOCK on this kernel";
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
    if (peer_ >= 0) close(peer_);
  }
  int fd_ = -1, peer_ = -1;
  sobas_hold h_{};
};

TEST_F(Levers, AHoldLocksTheBufferAndClampsTheWindowAtS) {
  ASSERT_EQ(sobas_enforce_hold(fd_, 300000, &h_), 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, kBufLock) & kRcvLock, kRcvLock);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_WINDOW_CLAMP), 300000);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, SO_RCVBUF), 2 * 600000);  // SO_RCVBUF = 2·S, doubled by the kernel
}

// Made smaller under a slow start's loss recovery, the buffer pruned its out-of-order data (docs/kernel-facts.md):
// a buffer autotuning has grown past 2·S is locked as it is.
TEST_F(Levers, AFirstHoldLocksABufferGrownPastTwoSWithoutShrinkingIt) {
  const long rmem_max = ProcField("/proc/sys/net/core/rmem_max", 0);
  ASSERT_GT(rmem_max, 0);
  const int grown = static_cast<int>(rmem_max < 1000000 ? rmem_max : 1000000);
  ASSERT_EQ(setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &grown, sizeof grown), 0);
  const int unlocked = GetInt(fd_, SOL_SOCKET, kBufLock) & ~kRcvLock;  // as autotuning leaves it
  ASSERT_EQ(setsockopt(fd_, SOL_SOCKET, kBufLock, &unlocked, sizeof unlocked), 0);
  const int before = GetInt(fd_, SOL_SOCKET, SO_RCVBUF);
  ASSERT_EQ(sobas_enforce_hold(fd_, static_cast<uint64_t>(grown) / 4, &h_), 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, kBufLock) & kRcvLock, kRcvLock);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, SO_RCVBUF), before);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_WINDOW_CLAMP), grown / 4);
  // A lift past what it holds raises it as before.
  ASSERT_EQ(sobas_enforce_hold(fd_, static_cast<uint64_t>(grown), &h_), 0);
  if (2L * grown <= rmem_max) {
    EXPECT_EQ(GetInt(fd_, SOL_SOCKET, SO_RCVBUF), 4 * grown);
  }
}

// Left locked, a released gig-tcp flow's window stopped at 5.2-6.5 MB and its loss recovery stalled on it
// (docs/kernel-facts.md): released, the buffer is what plain TCP's autotuning could reach, unlocked.
TEST_F(Levers, AReleaseUnlocksTheBufferAndOpensItAsFarAsThisProcessMay) {
  ASSERT_EQ(sobas_enforce_hold(fd_, 300000, &h_), 0);
  ASSERT_EQ(sobas_enforce_release(fd_, &h_), 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, kBufLock) & kRcvLock, 0);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_WINDOW_CLAMP), 1 << 30);
  const long rmem_max = ProcField("/proc/sys/net/core/rmem_max", 0);
  const long autotune = ProcField("/proc/sys/net/ipv4/tcp_rmem", 2);
  ASSERT_GT(rmem_max, 0);
  ASSERT_GT(autotune, 0);
  // Past rmem_max only with CAP_NET_ADMIN (SO_RCVBUFFORCE); root has it here.
  const long want = geteuid() == 0 && autotune > 2 * rmem_max ? autotune : 2 * rmem_max;
  EXPECT_GE(GetInt(fd_, SOL_SOCKET, SO_RCVBUF), want);
  EXPECT_EQ(h_.s, 0u);
}

TEST_F(Levers, AHoldAfterAReleaseLocksTheBufferAgainWithoutShrinkingIt) {
  ASSERT_EQ(sobas_enforce_hold(fd_, 300000, &h_), 0);
  ASSERT_EQ(sobas_enforce_release(fd_, &h_), 0);
  const int opened = GetInt(fd_, SOL_SOCKET, SO_RCVBUF);
  ASSERT_EQ(sobas_enforce_hold(fd_, 200000, &h_), 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, kBufLock) & kRcvLock, kRcvLock);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, SO_RCVBUF), opened);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_WINDOW_CLAMP), 200000);
  EXPECT_STREQ(sobas_enforce_lever(&h_), "lock+clamp");
}

// Aside, a ceiling caps the window alone: the buffer stays open and unlocked, autotuning's as plain TCP's,
// and the clamp is verified as a hold's is.
TEST_F(Levers, ACeilingAfterAReleaseClampsTheWindowAndLeavesTheBufferUnlocked) {
  ASSERT_EQ(sobas_enforce_hold(fd_, 300000, &h_), 0);
  ASSERT_EQ(sobas_enforce_release(fd_, &h_), 0);
  const int opened = GetInt(fd_, SOL_SOCKET, SO_RCVBUF);
  ASSERT_EQ(sobas_enforce_ceiling(fd_, 900000, &h_), 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, kBufLock) & kRcvLock, 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, SO_RCVBUF), opened);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_WINDOW_CLAMP), 900000);
  EXPECT_EQ(h_.s, 900000u);
  EXPECT_STREQ(sobas_enforce_lever(&h_), "clamp");
  const int moved = 1 << 24;
  ASSERT_EQ(setsockopt(fd_, IPPROTO_TCP, TCP_WINDOW_CLAMP, &moved, sizeof moved), 0);
  EXPECT_EQ(sobas_enforce_verify(fd_, &h_), 1);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_WINDOW_CLAMP), 900000);
  EXPECT_EQ(sobas_enforce_ceiling(fd_, 0, &h_), -EINVAL);
}

TEST_F(Levers, TheApplicationsSendBufferLockOutlivesARelease) {
  const int snd = 1 << 20;
  ASSERT_EQ(setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd), 0);
  ASSERT_EQ(sobas_enforce_hold(fd_, 300000, &h_), 0);
  ASSERT_EQ(sobas_enforce_release(fd_, &h_), 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, kBufLock), kSndLock);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, SO_SNDBUF), 2 * snd);
}

// A flow released without ever being locked (the window was only clamped) is not given a buffer.
TEST_F(Levers, AReleaseLeavesAnUnlockedBufferToAutotuning) {
  const int before = GetInt(fd_, SOL_SOCKET, SO_RCVBUF);
  ASSERT_EQ(sobas_enforce_release(fd_, &h_), 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, kBufLock), 0);
  EXPECT_EQ(GetInt(fd_, SOL_SOCKET, SO_RCVBUF), before);
}

// A searching sender's writer is woken by TCP_NOTSENT_LOWAT, set only when the mark changes, and given
// back the host's default (0: net.ipv4.tcp_notsent_lowat) after; an application's own mark is left alone.
TEST_F(Levers, AWakeMarkIsSetThenGivenBackAndAnApplicationsIsLeftAlone) {
  ASSERT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_NOTSENT_LOWAT), 0);
  ASSERT_EQ(sobas_enforce_wake(fd_, 262144, &h_), 0);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_NOTSENT_LOWAT), 262144);
  EXPECT_EQ(h_.lowat, 262144u);
  ASSERT_EQ(sobas_enforce_wake(fd_, 524288, &h_), 0);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_NOTSENT_LOWAT), 524288);
  ASSERT_EQ(sobas_enforce_wake(fd_, 0, &h_), 0);
  EXPECT_EQ(GetInt(fd_, IPPROTO_TCP, TCP_NOTSENT_LOWAT), 0);
  EXPECT_EQ(h_.lowat, 0u);

  const int app = 16384;
  ASSERT_EQ(setsockopt(peer_, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &app, sizeof app), 0);
  sobas_hold other{};
  EXPECT_EQ(sobas_enforce_wake(peer_, 262144, &other), -EEXIST);
  EXPECT_EQ(GetInt(peer_, IPPROTO_TCP, TCP_NOTSENT_LOWAT), app);
  EXPECT_EQ(other.lowat, 0u);
}

// The suite runs as root, which may set any algorithm: a CUBIC socket goes to reno and back, and ends
// on cubic; any other is left alone.
TEST_F(Levers, ACubicSenderIsRegrownAndOnlyACubicOne) {
  if (SetCc(fd_, "cubic") != 0) GTEST_SKIP() << "no cubic on this kernel";
  EXPECT_EQ(sobas_enforce_regrow(fd_), 0);
  EXPECT_EQ(Cc(fd_), "cubic");
  ASSERT_EQ(SetCc(fd_, "reno"), 0);
  EXPECT_EQ(sobas_enforce_regrow(fd_), 1);
  EXPECT_EQ(Cc(fd_), "reno");
  if (SetCc(fd_, "bbr") == 0) {
    EXPECT_EQ(sobas_enforce_regrow(fd_), 1);
    EXPECT_EQ(Cc(fd_), "bbr");
  }
  EXPECT_EQ(sobas_enforce_regrow(-1), -EBADF);
}

// A process that drops root after fork, as nginx's workers do, may no longer set cubic where its parent
// could: the flow is never left on reno. Whether the switch is allowed then is the host's allowed list.
TEST_F(Levers, ARegrowAfterDroppingRootNeverLeavesTheFlowOnReno) {
  if (SetCc(fd_, "cubic") != 0) GTEST_SKIP() << "no cubic on this kernel";
  ASSERT_EQ(sobas_enforce_regrow(fd_), 0);  // as root, in the parent
  std::ifstream list("/proc/sys/net/ipv4/tcp_allowed_congestion_control");
  std::string name;
  bool cubic_allowed = false;
  while (list >> name) cubic_allowed |= name == "cubic";
  pid_t pid = fork();
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    int r = sobas_enforce_regrow(fd_);
    char cc[16] = {0};
    socklen_t len = sizeof cc - 1;
    if (getsockopt(fd_, IPPROTO_TCP, TCP_CONGESTION, cc, &len) != 0 || std::string(cc) != "cubic") _exit(1);
    _exit(r == (cubic_allowed ? 0 : -EPERM) ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: left on another algorithm; 2: could not drop root; 3: "
                                    << (cubic_allowed ? "refused though cubic is allowed" : "not refused");
  EXPECT_EQ(Cc(fd_), "cubic");
}

}  // namespace
