// policy_test.cc — the bdp, drs and fixed policies fed synthetic windows, as the shim feeds them.
#include <gtest/gtest.h>

extern "C" {
#include "sobas/policy.h"
}

namespace {

constexpr uint64_t kMbps = 1000000;
constexpr uint32_t kRtt = 40000;
constexpr uint64_t kMin = 16384, kMax = 32u << 20;

// One 2·RTT window at mbps, its RTT rtt_us, into policy p.
int feed(sobas_window_policy &p, sobas_action &a, double mbps, uint32_t rtt_us = kRtt) {
  sobas_engine_input in{};
  in.rate_bps = uint64_t(mbps * kMbps);
  in.rtt_us = rtt_us;
  in.base_rtt_us = kRtt;
  in.mss = 1448;
  return sobas_policy_feed(&p, &in, &a);
}

TEST(Policy, FixedHoldsTheGivenSFromTheStartAndNeverMoves) {
  sobas_window_policy p;
  sobas_action a{};
  ASSERT_EQ(sobas_policy_start(&p, SOBAS_POLICY_FIXED, 550 * 1024, kMin, kMax, 0, kRtt, 0, &a), 1);
  EXPECT_TRUE(a.set);
  EXPECT_EQ(a.s, 550u * 1024);
  EXPECT_EQ(a.why, SOBAS_WHY_FIXED);
  EXPECT_EQ(p.state, SOBAS_ST_DECIDED);
  for (double r : {10.0, 90.0, 300.0}) EXPECT_EQ(feed(p, a, r), 0);
  EXPECT_EQ(sobas_policy_capacity(&p, 100 * kMbps, kRtt, 0, &a), 0);
  EXPECT_EQ(p.s, 550u * 1024);
}

TEST(Policy, BdpIsCapacityTimesRttOnceTheProbeKnowsIt) {
  sobas_window_policy p;
  sobas_action a{};
  EXPECT_EQ(sobas_policy_start(&p, SOBAS_POLICY_BDP, 0, kMin, kMax, 0, kRtt, 0, &a), 0) << "no C' yet: uncapped";
  EXPECT_EQ(p.s, kMax);
  ASSERT_EQ(sobas_policy_capacity(&p, 100 * kMbps, kRtt, 0, &a), 1);
  EXPECT_EQ(a.s, 500000u) << "100 Mb/s x 40 ms";
  EXPECT_EQ(a.why, SOBAS_WHY_BDP);
  EXPECT_EQ(sobas_policy_capacity(&p, 50 * kMbps, kRtt, 0, &a), 0) << "set once, as a tuned host is";
  EXPECT_EQ(feed(p, a, 30), 0);
  sobas_window_policy given;
  ASSERT_EQ(sobas_policy_start(&given, SOBAS_POLICY_BDP, 4u << 20, kMin, kMax, 100 * kMbps, kRtt, 0, &a), 1);
  EXPECT_EQ(a.s, 4u << 20) << "SOBAS_BDP_BYTES wins over C'";
}

TEST(Policy, DrsOffersTwiceThePerRttBytesAndNeverShrinks) {
  sobas_window_policy p;
  sobas_action a{};
  ASSERT_EQ(sobas_policy_start(&p, SOBAS_POLICY_DRS, 0, kMin, kMax, 0, kRtt, 0, &a), 1);
  EXPECT_EQ(a.s, 65536u) << "a new connection's window until measured";
  // A sender held by the window doubles it each window: 64 KiB per RTT is 13.1 Mb/s at 40 ms.
  uint64_t s = p.s;
  for (int i = 0; i < 4; i++) {
    ASSERT_EQ(feed(p, a, double(s) * 8 / kRtt), 1);
    EXPECT_EQ(a.s, 2 * s);
    EXPECT_EQ(a.why, SOBAS_WHY_DRS);
    s = a.s;
  }
  EXPECT_EQ(feed(p, a, 5), 0) << "never shrinks";
  EXPECT_EQ(p.s, s);
  // With a queue the RTT now is longer: DRS sizes for it (96 Mb/s x 60 ms x 2 = 1.44 MB).
  ASSERT_EQ(feed(p, a, 96, 60000), 1);
  EXPECT_EQ(a.s, 1440000u);
  EXPECT_EQ(feed(p, a, 0), 0) << "an idle window says nothing";
}

TEST(Policy, NamesAndLimits) {
  EXPECT_STREQ(sobas_policy_name(SOBAS_POLICY_FIXED), "fixed");
  EXPECT_STREQ(sobas_policy_name(SOBAS_POLICY_DRS), "drs");
  EXPECT_STREQ(sobas_policy_name(sobas_policy(9)), "?");
  sobas_window_policy p;
  sobas_action a{};
  ASSERT_EQ(sobas_policy_start(&p, SOBAS_POLICY_FIXED, 100, kMin, kMax, 0, kRtt, 0, &a), 1);
  EXPECT_EQ(a.s, kMin) << "never below s_min";
}

}  // namespace
