// measure_test.cc — 2·RTT measurement windows from synthetic TCP_INFO samples.
#include <gtest/gtest.h>

extern "C" {
#include "measure.h"
}

namespace {

constexpr int64_t kMs = 1000000;

sobas_sample at(int64_t t_ms, uint64_t rx, uint64_t tx = 0, uint32_t rcv_rtt_us = 40000, uint32_t rtt_us = 40000) {
  sobas_sample s{};
  s.t_ns = t_ms * kMs;
  s.bytes_received = rx;
  s.bytes_acked = tx;
  s.rcv_rtt_us = rcv_rtt_us;
  s.rtt_us = rtt_us;
  return s;
}

class MeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sobas_meas_params_default(&p);
    sobas_meas_init(&m);
  }
  sobas_meas_params p;
  sobas_meas m;
  sobas_window w{};
};

TEST_F(MeasureTest, FirstSampleOnlyOpensAWindow) {
  auto s = at(0, 0);
  EXPECT_EQ(sobas_meas_due_ns(&m), 0);
  EXPECT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_RECEIVER, &s, &w), SOBAS_MEAS_PENDING);
  EXPECT_EQ(sobas_meas_due_ns(&m), 80 * kMs);  // 2 × 40 ms
}

TEST_F(MeasureTest, WindowClosesAfterTwoRttWithTheRate) {
  auto s0 = at(0, 0), s1 = at(79, 500000), s2 = at(80, 1000000);
  sobas_meas_feed(&m, &p, SOBAS_ROLE_RECEIVER, &s0, &w);
  EXPECT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_RECEIVER, &s1, &w), SOBAS_MEAS_PENDING);
  ASSERT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_RECEIVER, &s2, &w), SOBAS_MEAS_WINDOW);
  EXPECT_EQ(w.rx_bytes, 1000000u);
  EXPECT_EQ(w.rx_rate_bps, 100000000u);  // 1 MB in 80 ms = 100 Mb/s
  EXPECT_EQ(w.rtt_us, 40000u);
  EXPECT_EQ(w.t_end_ns - w.t_start_ns, 80 * kMs);
  EXPECT_EQ(sobas_meas_due_ns(&m), 160 * kMs);  // next window starts where this one ended
}

TEST_F(MeasureTest, ReceiverUsesItsOwnRttSenderTheSmoothedOne) {
  auto s = at(0, 0, 0, 30000, 50000);
  EXPECT_EQ(sobas_meas_rtt_us(SOBAS_ROLE_RECEIVER, &s, &p), 30000u);
  EXPECT_EQ(sobas_meas_rtt_us(SOBAS_ROLE_SENDER, &s, &p), 50000u);
  s.rcv_rtt_us = 0;  // a receiver before its first estimate falls back to tcpi_rtt
  EXPECT_EQ(sobas_meas_rtt_us(SOBAS_ROLE_RECEIVER, &s, &p), 50000u);
  s.rtt_us = 0;
  EXPECT_EQ(sobas_meas_rtt_us(SOBAS_ROLE_RECEIVER, &s, &p), p.default_rtt_us);
}

TEST_F(MeasureTest, WindowLengthIsClamped) {
  auto tiny = at(0, 0, 0, 20, 20);  // loopback-like 20 µs
  EXPECT_EQ(sobas_meas_window_ns(SOBAS_ROLE_RECEIVER, &tiny, &p), 10 * kMs);
  auto huge = at(0, 0, 0, 5000000, 5000000);
  EXPECT_EQ(sobas_meas_window_ns(SOBAS_ROLE_RECEIVER, &huge, &p), 2000 * kMs);
}

TEST_F(MeasureTest, NewerRttStretchesTheOpenWindow) {
  auto s0 = at(0, 0, 0, 1000, 1000);  // handshake RTT: 1 ms
  sobas_meas_feed(&m, &p, SOBAS_ROLE_RECEIVER, &s0, &w);
  EXPECT_EQ(sobas_meas_due_ns(&m), 10 * kMs);  // floor
  auto s1 = at(12, 1000, 0, 40000, 40000);  // the loaded path says 40 ms
  EXPECT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_RECEIVER, &s1, &w), SOBAS_MEAS_PENDING);
  EXPECT_EQ(sobas_meas_due_ns(&m), 80 * kMs);
}

TEST_F(MeasureTest, SenderRatesAndRetransmitsAreCounted) {
  auto s0 = at(0, 0, 0), s1 = at(100, 0, 2500000);
  s0.total_retrans = 3;
  s1.total_retrans = 10;
  s1.rcv_ooopack = 4;
  sobas_meas_feed(&m, &p, SOBAS_ROLE_SENDER, &s0, &w);
  ASSERT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_SENDER, &s1, &w), SOBAS_MEAS_WINDOW);
  EXPECT_EQ(w.tx_rate_bps, 200000000u);
  EXPECT_EQ(w.rx_rate_bps, 0u);
  EXPECT_EQ(w.retrans, 7u);
  EXPECT_EQ(w.ooopack, 4u);
}

// After a loss's repair the cumulative ACK takes the SACKed data at once; the segments delivered count
// it when it arrived. During the repair the acked count lags, and stays the reading.
TEST_F(MeasureTest, ASendersWindowAfterARepairCountsTheSegmentsDelivered) {
  auto at_sender = [](int64_t t_ms, uint64_t acked, uint32_t delivered) {
    sobas_sample s = at(t_ms, 0, acked);
    s.delivered = delivered;
    s.snd_mss = 1000;
    s.have = SOBAS_HAVE_DELIVERED;
    return s;
  };
  auto s0 = at_sender(0, 0, 0), s1 = at_sender(80, 500000, 1500), s2 = at_sender(160, 2500000, 2500);
  sobas_meas_feed(&m, &p, SOBAS_ROLE_SENDER, &s0, &w);
  ASSERT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_SENDER, &s1, &w), SOBAS_MEAS_WINDOW);
  EXPECT_EQ(w.tx_rate_bps, 50000000u);  // repairing: 0.5 MB acked of 1.5 MB delivered
  ASSERT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_SENDER, &s2, &w), SOBAS_MEAS_WINDOW);
  EXPECT_EQ(w.tx_bytes, 1000000u);  // 2 MB acked, 1 MB of it delivered in this window
  EXPECT_EQ(w.tx_rate_bps, 100000000u);
  auto s3 = at_sender(240, 4500000, 3500);
  s3.have = 0;  // a kernel without tcpi_delivered: the acked count
  ASSERT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_SENDER, &s3, &w), SOBAS_MEAS_WINDOW);
  EXPECT_EQ(w.tx_bytes, 2000000u);
}

TEST_F(MeasureTest, CountersGoingBackwardsMeanAnotherSocket) {
  auto s0 = at(0, 5000), s1 = at(100, 4000);
  sobas_meas_feed(&m, &p, SOBAS_ROLE_RECEIVER, &s0, &w);
  EXPECT_EQ(sobas_meas_feed(&m, &p, SOBAS_ROLE_RECEIVER, &s1, &w), SOBAS_MEAS_REGRESSED);
}

TEST_F(MeasureTest, RateOfEmptyIntervalIsZeroAndLargeValuesDoNotOverflow) {
  EXPECT_EQ(sobas_rate_bps(1000, 0), 0u);
  // 100 GB in 1 s: bytes·8·1e9 overflows 64 bits; the result must not.
  EXPECT_EQ(sobas_rate_bps(100000000000ull, 1000000000), 800000000000ull);
}

}  // namespace

// What limited a window: an 80 ms window at 40 ms RTT, chrono stats in µs.
class LimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    w.t_start_ns = 0;
    w.t_end_ns = 80 * kMs;
    w.rtt_us = 40000;
    s.have = SOBAS_HAVE_CHRONO | SOBAS_HAVE_RCV_WND;
  }
  sobas_limit sender(uint64_t busy, uint64_t rwnd, uint64_t sndbuf, int paced = 0) {
    w.busy_us = busy, w.rwnd_limited_us = rwnd, w.sndbuf_limited_us = sndbuf;
    return sobas_window_limit(SOBAS_ROLE_SENDER, &w, &s, paced ? 500000 : 0, paced, 0);
  }
  // A receiver getting `mbps` through an advertised window of `wnd` bytes.
  sobas_limit receiver(double mbps, uint32_t wnd, uint64_t held_s = 0, uint64_t unread = 0) {
    w.rx_rate_bps = uint64_t(mbps * 1e6);
    s.rcv_wnd = wnd;
    return sobas_window_limit(SOBAS_ROLE_RECEIVER, &w, &s, held_s, 0, unread);
  }
  sobas_window w{};
  sobas_sample s{};
};

TEST_F(LimitTest, ASenderIsLimitedByWhatHeldItForOverHalfTheWindow) {
  EXPECT_EQ(sender(80000, 0, 0), SOBAS_LIMIT_PATH);
  EXPECT_EQ(sender(80000, 0, 0, 1), SOBAS_LIMIT_SOBAS);
  EXPECT_EQ(sender(30000, 0, 0), SOBAS_LIMIT_APP);           // idle more than half: nothing to send
  w.app_limited = 1;
  EXPECT_EQ(sender(80000, 0, 0, 1), SOBAS_LIMIT_APP);        // the kernel's own mark
  // ... which is its last delivery sample's: a window the peer's window held for most of it is the
  // peer's (measured: held 168 of 168 ms by a slow reader's window, marked at the end)
  EXPECT_EQ(sender(80000, 80000, 0), SOBAS_LIMIT_PEER_WINDOW);
  w.app_limited = 0;
  EXPECT_EQ(sender(80000, 50000, 0, 1), SOBAS_LIMIT_PEER_WINDOW);
  EXPECT_EQ(sender(80000, 0, 40000), SOBAS_LIMIT_SNDBUF);
  EXPECT_EQ(sender(80000, 39000, 39000), SOBAS_LIMIT_PATH);  // neither over half
  s.have = 0;
  EXPECT_EQ(sender(80000, 80000, 0), SOBAS_LIMIT_UNKNOWN);   // no chrono stats: no guess
}

TEST_F(LimitTest, APacedSenderWhoseInFlightFillsItsCwndWaitsOnThePath) {
  // udp-leave, sobas both at ddc950e: 292 segments of 1448 bytes; lifted, 82.2 Mb/s at 40.8 ms filled
  // them; held after the lift, 339 segments carried 89.5 Mb/s with room to spare.
  s.snd_mss = 1448;
  s.snd_cwnd = 292;
  w.tx_rate_bps = 82200000;
  w.rtt_us = 40800;
  EXPECT_EQ(sender(80000, 0, 0, 1), SOBAS_LIMIT_PATH);
  s.snd_cwnd = 339;
  w.tx_rate_bps = 89500000;
  EXPECT_EQ(sender(80000, 0, 0, 1), SOBAS_LIMIT_SOBAS);
  s.snd_cwnd = 0;  // no cwnd read: what holds the pace is sobas
  EXPECT_EQ(sender(80000, 0, 0, 1), SOBAS_LIMIT_SOBAS);
  s.snd_cwnd = 292;
  s.snd_mss = 0;
  EXPECT_EQ(sender(80000, 0, 0, 1), SOBAS_LIMIT_SOBAS);
}

TEST_F(LimitTest, AReceiverTellsItsOwnWindowItsReaderAndSobasButNotTheSenderFromThePath) {
  // 100 Mb/s over 40 ms is 500 KB per round trip.
  EXPECT_EQ(receiver(100, 2000000), SOBAS_LIMIT_SENDER_OR_PATH);  // autotuning's window, a quarter used
  EXPECT_EQ(receiver(100, 520000), SOBAS_LIMIT_RCV_WINDOW);
  EXPECT_EQ(receiver(100, 520000, 510000), SOBAS_LIMIT_SOBAS);
  EXPECT_EQ(receiver(10, 40000, 0, 3000000), SOBAS_LIMIT_APP);    // 3 MB unread, the window shrunk
  EXPECT_EQ(receiver(17, 200000, 0, 300000), SOBAS_LIMIT_APP);    // the read just made opened the window
  EXPECT_EQ(receiver(50, 2000000, 510000), SOBAS_LIMIT_SENDER_OR_PATH);  // S not reached yet
  s.have = 0;
  EXPECT_EQ(receiver(100, 520000), SOBAS_LIMIT_UNKNOWN);
}
