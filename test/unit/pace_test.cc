// pace_test.cc — the rate a steered sender is paced at: S as a rate, and the queue feedback that drains what it queues.
#include <gtest/gtest.h>

extern "C" {
#include "pace.h"
}

namespace {

constexpr double kHeadroom = 0.02;

TEST(Pace, HeldHalfTheHeadroomUnderTheRateSWasSetFor) {
  // S = 1.02 · R · T for R = 12.5 MB/s (100 Mb/s) over 40 ms: paced at 0.99 · R.
  const uint64_t s = static_cast<uint64_t>(1.02 * 12.5e6 * 0.040);
  EXPECT_NEAR(static_cast<double>(sobas_pace_held(s, 40000, kHeadroom)), 0.99 * 12.5e6, 0.0005 * 12.5e6);
}

TEST(Pace, MarginIsTwoAndAHalfPercentAndAtLeastHalfAMillisecond) {
  EXPECT_EQ(sobas_pace_margin_us(150000), 3750u);
  EXPECT_EQ(sobas_pace_margin_us(40000), 1000u);
  EXPECT_EQ(sobas_pace_margin_us(20000), 500u);  // 1 Gb/s, 20 ms: the 5% bar is 1 ms of RTT+
  EXPECT_EQ(sobas_pace_margin_us(5000), 500u);
}

TEST(Pace, HeldWhileTheRttShowsNoQueue) {
  const uint64_t held = 70000000;  // 560 Mb/s
  // Held alone at 1 Gb/s the RTT reads 0.3-0.5 ms over a 20 ms base: the link's serialisation.
  EXPECT_EQ(sobas_pace_now(held, 0, 20400, 20000, 0), held);
  EXPECT_EQ(sobas_pace_now(held, 0, 20500, 20000, 0), held);
  EXPECT_EQ(sobas_pace_now(held, 0, 40999, 40000, 0), held);
}

TEST(Pace, AQueueIsDrainedWithinTheNextWindow) {
  const uint64_t held = 70000000;
  const uint32_t t = 20000, rtt = 21200;  // 1.2 ms of queue at a 20 ms base (gig-udp, before the 0.5 ms margin)
  const uint64_t now = sobas_pace_now(held, 0, rtt, t, 0);
  ASSERT_LT(now, held);
  // Over the next window (two RTTs) the pace sends as many bytes fewer as the queue holds at the held
  // rate: the queue is gone by the window's end.
  const double cut = static_cast<double>(held - now) * 2.0 * rtt / 1e6;
  const double queued = static_cast<double>(held) * (rtt - t) / 1e6;
  EXPECT_NEAR(cut, queued, 0.001 * queued);
}

TEST(Pace, ALiftsQueueIsLeftForTheLiftToRead) {
  EXPECT_EQ(sobas_pace_now(70000000, 0, 25000, 20000, 1), 70000000u);
  EXPECT_EQ(sobas_pace_now(70000000, 60000000, 25000, 20000, 1), 70000000u);
}

TEST(Pace, ADrainHeldOverThePathIsCutFromWhatThePathGave) {
  // gig-udp at 29a0511: held at 661.6 Mb/s where A = 551, the window delivering 570.9 with 16.9 ms of
  // queue on a 20 ms base. Cut from the held rate the pace stays near A, and the queue stands.
  const uint64_t held = 661600000 / 8, got = 570900000 / 8, a = 551000000 / 8;
  const uint32_t t = 20000, rtt = 36900;
  EXPECT_GT(sobas_pace_now(held, 0, rtt, t, 0), a * 9 / 10);
  const uint64_t now = sobas_pace_now(held, got, rtt, t, 0);
  ASSERT_LT(now, a);  // unsigned: the drain below is only meaningful under A
  // From what the path gave, the pace sits under A by enough to empty most of the queue within the
  // next window (two RTTs).
  const double drained = static_cast<double>(a - now) * 2.0 * rtt / 1e6;
  const double queued = static_cast<double>(a) * (rtt - t) / 1e6;
  EXPECT_GT(drained, 0.8 * queued);
  // A rate got over the held one changes nothing: the cut is never from more than is held.
  EXPECT_EQ(sobas_pace_now(held, held * 2, rtt, t, 0), sobas_pace_now(held, 0, rtt, t, 0));
}

TEST(Pace, ACwndShortOfThePaceTimesTheBaseIsShort) {
  // udp-leave, sobas both at ddc950e: cwnd 272 segments of 1448 bytes (394 kB) on a 40.4 ms base carries
  // 78 Mb/s; the lift to S = 442549 paced at 85.1 Mb/s waited on it.
  const uint64_t cwnd = 272 * 1448, held = sobas_pace_held(442549, 40400, kHeadroom);
  EXPECT_TRUE(sobas_pace_cwnd_short(cwnd, held, 40400));
  EXPECT_FALSE(sobas_pace_cwnd_short(cwnd, held * 9 / 10, 40400));
  // A cwnd that carries the pace exactly is not short.
  EXPECT_FALSE(sobas_pace_cwnd_short(12500000 / 25, 12500000, 40000));
  EXPECT_TRUE(sobas_pace_cwnd_short(12500000 / 25 - 1, 12500000, 40000));
}

}  // namespace
