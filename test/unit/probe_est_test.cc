// probe_est_test.cc — the side probe's estimators on synthetic timings: RTT, forward loss from echo gaps, C' from train dispersion.
#include <gtest/gtest.h>

#include <cstring>

#include "probe_est.h"

namespace {

sobas_echo_window take(sobas_echo_est &e) {
  sobas_echo_window w;
  sobas_echo_take(&e, &w);
  return w;
}

TEST(EchoEstimator, NoGapsNoLossAndTheWindowsRtt) {
  sobas_echo_est e{};
  for (uint32_t i = 0; i < 10; i++) sobas_echo_add(&e, i, 40000 + 100 * i);
  auto w = take(e);
  EXPECT_EQ(w.echoes, 10u);
  EXPECT_EQ(w.lost, 0u);
  EXPECT_EQ(w.rtt_avg_us, 40450u);
  EXPECT_EQ(w.rtt_max_us, 40900u);
  EXPECT_EQ(w.rtt_min_us, 40000u);
  EXPECT_EQ(w.rtt_least_us, 40000u);
  sobas_echo_add(&e, 10, 52000);
  EXPECT_EQ(take(e).rtt_least_us, 52000u) << "the least of this window's echoes";
  auto next = take(e);
  EXPECT_EQ(next.echoes, 0u) << "a window starts empty";
  EXPECT_EQ(next.rtt_avg_us, 0u);
  EXPECT_EQ(next.rtt_least_us, 0u);
  EXPECT_EQ(next.rtt_min_us, 40000u) << "the minimum is the flow's, not the window's";
}

TEST(EchoEstimator, GapsAreForwardLossReportedOnce) {
  sobas_echo_est e{};
  for (uint32_t i : {0u, 1u, 2u, 5u, 6u}) sobas_echo_add(&e, i, 40000);
  auto w = take(e);
  EXPECT_EQ(w.lost, 2u);
  EXPECT_EQ(w.lost_total, 2u);
  sobas_echo_add(&e, 7, 40000);
  EXPECT_EQ(take(e).lost, 0u) << "the same gap is not reported twice";
  sobas_echo_add(&e, 9, 40000);
  auto w3 = take(e);
  EXPECT_EQ(w3.lost, 1u);
  EXPECT_EQ(w3.lost_total, 3u);
  EXPECT_EQ(w3.received_total, 7u);
}

TEST(EchoEstimator, LateEchoFillsItsGapWithoutANegativeLoss) {
  sobas_echo_est e{};
  for (uint32_t i : {0u, 1u, 3u}) sobas_echo_add(&e, i, 40000);
  EXPECT_EQ(take(e).lost, 1u);
  sobas_echo_add(&e, 2, 41000);  // reordered, not lost after all
  sobas_echo_add(&e, 4, 40000);
  auto w = take(e);
  EXPECT_EQ(w.lost, 0u);
  EXPECT_EQ(w.lost_total, 1u) << "what was reported stays reported";
  sobas_echo_add(&e, 6, 40000);
  EXPECT_EQ(take(e).lost, 0u) << "the late echo paid for the next gap";
}

TEST(EchoEstimator, SequenceWrapsAround) {
  sobas_echo_est e{};
  for (uint32_t i = 0xfffffffcu; i != 3u; i++)
    if (i != 0xffffffffu) sobas_echo_add(&e, i, 40000);
  auto w = take(e);
  EXPECT_EQ(w.lost, 1u);
  EXPECT_EQ(w.echoes, 6u);
}

// A train of 32 packets of 1500 IP bytes through a 100 Mb/s bottleneck: 120 µs apart.
TEST(TrainEstimator, DispersionGivesTheBottleneckRate) {
  int64_t t[32];
  for (int i = 0; i < 32; i++) t[i] = 1000000000 + i * 120000;
  EXPECT_NEAR(double(sobas_train_rate_bps(t, 32, 1500)), 100e6, 1e3);
  t[0] = t[1] - 1000;  // the head handed over late, right in front of the second: not timed
  EXPECT_NEAR(double(sobas_train_rate_bps(t, 32, 1500)), 100e6, 1e3);
  t[0] = 0;  // the first and a middle packet lost: the rest still measure the gap
  t[17] = 0;
  EXPECT_NEAR(double(sobas_train_rate_bps(t, 32, 1500)), 100e6, 1e3);
}

TEST(TrainEstimator, TooFewPacketsOrNonsenseTimesGiveNothing) {
  int64_t t[32] = {};
  for (int i = 0; i < 15; i++) t[i] = 1000 + i * 120000;
  EXPECT_EQ(sobas_train_rate_bps(t, 32, 1500), 0u) << "under half the train";
  int64_t same[4] = {5, 5, 5, 5};
  EXPECT_EQ(sobas_train_rate_bps(same, 4, 1500), 0u) << "no dispersion at all";
  int64_t one[2] = {5, 0};
  EXPECT_EQ(sobas_train_rate_bps(one, 2, 1500), 0u);
}

TEST(TrainEstimator, CapacityIsTheMedianOfUsableTrains) {
  const uint64_t r[5] = {100, 98, 0, 40, 101};  // one lost train, one spread by a burst of the flow's own
  EXPECT_EQ(sobas_capacity_bps(r, 5, 3), 99u);
  const uint64_t odd[5] = {100, 98, 97, 40, 101};
  EXPECT_EQ(sobas_capacity_bps(odd, 5, 3), 98u);
  const uint64_t few[5] = {100, 0, 0, 0, 101};
  EXPECT_EQ(sobas_capacity_bps(few, 5, 3), 0u) << "two trains are not enough";
}

TEST(TrainEstimator, IpBytesCountTheHeaders) {
  EXPECT_EQ(sobas_train_ip_bytes(1472, 4), 1500u);
  EXPECT_EQ(sobas_train_ip_bytes(1452, 6), 1500u);
}

}  // namespace
