// steered_test.cc — sobasd's steered-flows table: a flow marked is found while fresh and only then, slots are reused once stale, a full chain refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "sobas/steered.h"

namespace {

constexpr int64_t kSec = 1000000000LL;

sobas_probe_flow flow4(uint16_t rcv_port) {
  sobas_probe_flow f{};
  f.family = 4;
  f.rcv_port = rcv_port;
  f.snd_port = 8080;
  const uint8_t rcv[4] = {10, 80, 2, 1}, snd[4] = {10, 80, 1, 1};
  std::memcpy(f.rcv_addr, rcv, 4);
  std::memcpy(f.snd_addr, snd, 4);
  return f;
}

std::unique_ptr<sobas_steered_table> fresh_table() {
  auto t = std::make_unique<sobas_steered_table>();
  std::memset(t.get(), 0, sizeof *t);
  sobas_steered_init(t.get());
  return t;
}

TEST(Steered, AFlowMarkedIsFoundWhileFreshAndNoOtherIs) {
  auto t = fresh_table();
  ASSERT_TRUE(sobas_steered_valid(t.get()));
  sobas_probe_flow f = flow4(50000), other = flow4(50001);
  EXPECT_FALSE(sobas_steered_has(t.get(), &f, 5 * kSec));
  ASSERT_EQ(sobas_steered_put(t.get(), &f, 5 * kSec), 0);
  EXPECT_TRUE(sobas_steered_has(t.get(), &f, 5 * kSec));
  EXPECT_TRUE(sobas_steered_has(t.get(), &f, 5 * kSec + SOBAS_STEERED_FRESH_NS - 1));
  EXPECT_FALSE(sobas_steered_has(t.get(), &other, 5 * kSec));
  // The same ports and addresses as IPv6: another flow.
  sobas_probe_flow six = f;
  six.family = 6;
  EXPECT_FALSE(sobas_steered_has(t.get(), &six, 5 * kSec));
  // The probe stopped: a second without a mark, the flow is no longer steered.
  EXPECT_FALSE(sobas_steered_has(t.get(), &f, 5 * kSec + SOBAS_STEERED_FRESH_NS));
}

TEST(Steered, MarksKeepAFlowFreshButRewriteItsSlotOnlyEveryRefresh) {
  auto t = fresh_table();
  sobas_probe_flow f = flow4(50000);
  ASSERT_EQ(sobas_steered_put(t.get(), &f, 1 * kSec), 0);
  auto seq_sum = [&] {
    uint64_t s = 0;
    for (const auto &slot : t->slot) s += slot.seq;
    return s;
  };
  uint64_t written = seq_sum();
  EXPECT_EQ(written, 2u);  // one slot written once: odd, then even
  // Probes every 10 ms for 3 s: found all along, the slot's fields never rewritten (no torn reads).
  for (int64_t now = 1 * kSec; now < 4 * kSec; now += 10000000) {
    ASSERT_EQ(sobas_steered_put(t.get(), &f, now), 0);
    ASSERT_TRUE(sobas_steered_has(t.get(), &f, now));
  }
  EXPECT_EQ(seq_sum(), written);
  EXPECT_TRUE(sobas_steered_has(t.get(), &f, 4 * kSec + SOBAS_STEERED_FRESH_NS / 2));
}

TEST(Steered, AFullChainRefusesUntilItsFlowsGoStale) {
  auto t = fresh_table();
  // More fresh flows than the table has slots: each flow's chain of SOBAS_STEERED_PROBES fills up, and
  // a flow with none free is refused, never written over a live one.
  int refused = 0;
  for (int i = 0; i < SOBAS_STEERED_SLOTS + 64; i++) {
    sobas_probe_flow f = flow4(uint16_t(1024 + i));
    if (sobas_steered_put(t.get(), &f, 10 * kSec) != 0) refused++;
  }
  EXPECT_GE(refused, 64);
  int found = 0;
  for (int i = 0; i < SOBAS_STEERED_SLOTS + 64; i++) {
    sobas_probe_flow f = flow4(uint16_t(1024 + i));
    found += sobas_steered_has(t.get(), &f, 10 * kSec);
  }
  EXPECT_EQ(found, SOBAS_STEERED_SLOTS + 64 - refused);
  // A second later every one of them is stale: a new flow gets a slot, and the old ones read as gone.
  sobas_probe_flow late = flow4(60000);
  EXPECT_EQ(sobas_steered_put(t.get(), &late, 10 * kSec + SOBAS_STEERED_FRESH_NS), 0);
  EXPECT_TRUE(sobas_steered_has(t.get(), &late, 10 * kSec + SOBAS_STEERED_FRESH_NS));
  sobas_probe_flow first = flow4(1024);
  EXPECT_FALSE(sobas_steered_has(t.get(), &first, 10 * kSec + SOBAS_STEERED_FRESH_NS));
}

TEST(Steered, ATableOfAnotherLayoutIsNotRead) {
  auto t = fresh_table();
  t->version = SOBAS_STEERED_VERSION + 1;
  EXPECT_FALSE(sobas_steered_valid(t.get()));
  t = fresh_table();
  t->magic = 0;
  EXPECT_FALSE(sobas_steered_valid(t.get()));
  t = fresh_table();
  t->slot_size = uint16_t(sizeof(sobas_steered_slot) + 8);
  EXPECT_FALSE(sobas_steered_valid(t.get()));
}

}  // namespace
