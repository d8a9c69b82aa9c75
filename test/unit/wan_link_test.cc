// wan_link_test.cc — the path emulator's queue, rate, delay and loss accounting on synthetic packet streams.
#include <gtest/gtest.h>

#include <vector>

#include "link.h"
#include "units.h"

namespace {

constexpr uint64_t kMs = 1000000;

struct Link {
  std::vector<wan_pkt> ring;
  wan_link l{};
  explicit Link(wan_params p, uint64_t slots = 1024) : ring(slots) {
    EXPECT_EQ(wan_link_init(&l, &p, ring.data(), slots), 0);
  }
  wan_verdict offer(uint64_t t, uint32_t len, unsigned stream = 0) {
    uint64_t slot;
    return wan_link_offer(&l, t, len, stream, &slot);
  }
  // Pops everything due by t, returning release times.
  std::vector<uint64_t> drain(uint64_t t) {
    std::vector<uint64_t> out;
    uint64_t slot, rel;
    uint32_t len, virt;
    while (wan_link_pop(&l, t, &slot, &len, &rel, &virt)) out.push_back(rel);
    return out;
  }
};

TEST(WanLink, SerialisationTimeIsBytesOverRate) {
  wan_params p{};
  p.rate_bps = 100000000;  // 100 Mb/s: 1500 B take 120 µs
  EXPECT_EQ(wan_tx_ns(&p, 1500), 120000u);
  p.rate_bps = 97000000;   // rounded to the nearest ns, no drift worth a packet per hour
  EXPECT_EQ(wan_tx_ns(&p, 1500), 123711u);
  p.rate_bps = 0;
  EXPECT_EQ(wan_tx_ns(&p, 1500), 0u);
}

TEST(WanLink, IdleLinkAddsSerialisationPlusDelay) {
  wan_params p{};
  p.rate_bps = 100000000;
  p.delay_ns = 20 * kMs;
  Link k(p);
  ASSERT_EQ(k.offer(1000, 1500), WAN_QUEUED);
  EXPECT_EQ(wan_link_next_release(&k.l), 1000 + 120000 + 20 * kMs);
  EXPECT_TRUE(k.drain(1000 + 120000 + 20 * kMs - 1).empty());
  EXPECT_EQ(k.drain(1000 + 120000 + 20 * kMs).size(), 1u);
  EXPECT_EQ(wan_link_next_release(&k.l), UINT64_MAX);
}

TEST(WanLink, BackToBackPacketsLeaveAtTheLinkRate) {
  wan_params p{};
  p.rate_bps = 1000000000;  // 1500 B = 12 µs
  p.delay_ns = 10 * kMs;
  Link k(p);
  for (int i = 0; i < 100; i++) ASSERT_EQ(k.offer(0, 1500), WAN_QUEUED);
  auto rel = k.drain(UINT64_MAX - 1);
  ASSERT_EQ(rel.size(), 100u);
  for (size_t i = 0; i < rel.size(); i++) EXPECT_EQ(rel[i], 10 * kMs + (i + 1) * 12000);
  EXPECT_EQ(k.l.st.pkts_out, 100u);
  EXPECT_EQ(k.l.st.bytes_out, 150000u);
}

TEST(WanLink, ArrivalsSlowerThanTheRateNeverQueue) {
  wan_params p{};
  p.rate_bps = 100000000;
  p.limit_bytes = 1500;  // room for one packet only
  Link k(p);
  for (uint64_t i = 0; i < 50; i++) ASSERT_EQ(k.offer(i * 120000, 1500), WAN_QUEUED) << i;
  EXPECT_EQ(k.l.st.drop_queue, 0u);
  EXPECT_EQ(k.l.st.max_backlog_pkts, 1u);
}

TEST(WanLink, DropTailByBytesKeepsTheBacklogUnderTheLimit) {
  wan_params p{};
  p.rate_bps = 100000000;
  p.limit_bytes = 15000;  // ten full packets, the one on the wire included
  Link k(p);
  int queued = 0;
  for (int i = 0; i < 30; i++) queued += k.offer(0, 1500) == WAN_QUEUED;
  EXPECT_EQ(queued, 10);
  EXPECT_EQ(k.l.st.drop_queue, 20u);
  EXPECT_EQ(k.l.st.max_backlog_bytes, 15000u);
  // After one packet's serialisation time a slot frees, and only one.
  EXPECT_EQ(k.offer(120000, 1500), WAN_QUEUED);
  EXPECT_EQ(k.offer(120000, 1500), WAN_DROP_QUEUE);
  EXPECT_EQ(wan_link_backlog(&k.l, 120000), 15000u);
  EXPECT_EQ(wan_link_backlog(&k.l, 120000 * 11), 0u);
}

TEST(WanLink, SmallPacketsFitWhereBigOnesDoNot) {
  wan_params p{};
  p.rate_bps = 100000000;
  p.limit_bytes = 3000;
  Link k(p);
  EXPECT_EQ(k.offer(0, 1500), WAN_QUEUED);
  EXPECT_EQ(k.offer(0, 1460), WAN_QUEUED);
  EXPECT_EQ(k.offer(0, 1500), WAN_DROP_QUEUE);
  EXPECT_EQ(k.offer(0, 40), WAN_QUEUED);
}

TEST(WanLink, DropTailByPackets) {
  wan_params p{};
  p.rate_bps = 1000000;
  p.limit_pkts = 3;
  Link k(p);
  for (int i = 0; i < 3; i++) EXPECT_EQ(k.offer(0, 40), WAN_QUEUED);
  EXPECT_EQ(k.offer(0, 40), WAN_DROP_QUEUE);
  EXPECT_EQ(k.l.st.max_backlog_pkts, 3u);
}

TEST(WanLink, DelayLineHoldsPacketsButNotTheBacklog) {
  // Serialised packets waiting out the propagation delay are in flight, not queued: they must not
  // count against DropTail, or a long path would look like a small buffer.
  wan_params p{};
  p.rate_bps = 100000000;
  p.delay_ns = 100 * kMs;
  p.limit_bytes = 3000;
  Link k(p);
  for (uint64_t i = 0; i < 500; i++) ASSERT_EQ(k.offer(i * 120000, 1500), WAN_QUEUED) << i;
  EXPECT_EQ(k.l.st.drop_queue, 0u);
  EXPECT_GT(k.l.tail - k.l.head, 400u);
}

TEST(WanLink, RunningOutOfSlotsIsCountedAsTheEmulatorsFault) {
  wan_params p{};
  p.delay_ns = 100 * kMs;
  Link k(p, 4);
  for (int i = 0; i < 4; i++) EXPECT_EQ(k.offer(0, 100), WAN_QUEUED);
  EXPECT_EQ(k.offer(0, 100), WAN_DROP_FULL);
  EXPECT_EQ(k.l.st.drop_full, 1u);
  EXPECT_EQ(k.l.st.drop_queue, 0u);
  EXPECT_EQ(k.drain(100 * kMs).size(), 4u);
  EXPECT_EQ(k.offer(100 * kMs, 100), WAN_QUEUED);
}

TEST(WanLink, RandomLossMatchesTheProbabilityAndRepeats) {
  wan_params p{};
  p.loss = 0.01;
  p.seed = 7;
  Link a(p, 1 << 17), b(p, 1 << 17);
  for (int i = 0; i < 100000; i++) {
    a.offer(i, 1500);
    b.offer(i, 1500);
    a.drain(i);
    b.drain(i);
  }
  EXPECT_NEAR(double(a.l.st.drop_loss), 1000.0, 100.0);  // ±3 sd of a binomial(1e5, 0.01)
  EXPECT_EQ(a.l.st.drop_loss, b.l.st.drop_loss);
  EXPECT_EQ(a.l.st.pkts_out + a.l.st.drop_loss, 100000u);
}

// TCP meets the same losses with or without a side probe's packets on the link: one loss sequence
// per stream (this is what lets sobas with its probe be compared against plain TCP on a lossy path).
TEST(WanLink, EachLossStreamRepeatsWhateverElseSharesTheLink) {
  wan_params p{};
  p.loss = 0.01;
  p.seed = 7;
  Link alone(p, 1 << 17), shared(p, 1 << 17);
  std::vector<int> lost_alone, lost_shared;
  for (int i = 0; i < 20000; i++) {
    if (alone.offer(2 * i, 1500) == WAN_DROP_LOSS) lost_alone.push_back(i);
    if (i % 3 == 0) shared.offer(2 * i, 100, 1);  // a probe packet in between
    if (shared.offer(2 * i + 1, 1500) == WAN_DROP_LOSS) lost_shared.push_back(i);
    alone.drain(2 * i + 1);
    shared.drain(2 * i + 1);
  }
  EXPECT_FALSE(lost_alone.empty());
  EXPECT_EQ(lost_alone, lost_shared);
  EXPECT_GT(shared.l.st.drop_loss, lost_shared.size()) << "the other stream loses packets too";
}

// A host stall freezes the link: what was waiting is released the stall later with its spacing kept
// (no burst for a sender to answer with another), and nothing is caught up afterwards.
TEST(WanLink, AStallFreezesReleasesWithTheirSpacing) {
  wan_params p{};
  p.rate_bps = 100000000;  // 1500 B = 120 µs
  p.delay_ns = 20 * kMs;
  Link k(p);
  for (int i = 0; i < 200; i++) ASSERT_EQ(k.offer(0, 1500), WAN_QUEUED);
  wan_link_stall(&k.l, 10 * kMs, 6 * kMs);  // the host did not run us from 4 to 10 ms
  EXPECT_EQ(k.l.st.stall_lag_ns, 6 * kMs);
  auto due = k.drain(UINT64_MAX - 1);
  ASSERT_EQ(due.size(), 200u);
  EXPECT_EQ(due[0], 20 * kMs + 120000 + 6 * kMs) << "the first waits the whole stall";
  for (size_t i = 1; i < due.size(); i++) EXPECT_EQ(due[i] - due[i - 1], 120000u) << i;
}

// ACKs read together after the emulator was held up leave with the spacing they arrived with, not at
// once: a batch of 10 read 1 ms after the last read is spread at 0.9 x 100 µs, never before its read.
TEST(WanLink, ABatchReadTogetherKeepsItsArrivalSpacing) {
  wan_params p{};
  p.rate_bps = 100000000;  // a 52-byte ACK serialises in 4.16 µs
  p.delay_ns = 20 * kMs;
  Link k(p);
  ASSERT_EQ(k.offer(1 * kMs, 52), WAN_QUEUED);  // one packet a read: it arrives when read
  EXPECT_EQ(wan_link_next_release(&k.l), 1 * kMs + 4160 + 20 * kMs);
  wan_link_batch(&k.l, 1 * kMs, 10);
  for (int i = 0; i < 10; i++) ASSERT_EQ(k.offer(2 * kMs, 52), WAN_QUEUED);
  auto due = k.drain(UINT64_MAX - 1);
  ASSERT_EQ(due.size(), 11u);
  EXPECT_EQ(due[1], 2 * kMs + 4160 + 20 * kMs) << "the first of the batch when it was read";
  for (size_t i = 2; i < due.size(); i++) EXPECT_EQ(due[i] - due[i - 1], 90000u) << i;
  EXPECT_EQ(k.l.st.spaced_max_ns, 9 * 90000u);
}

// A batch read after a longer hole is spread over at most WAN_SPACING_MAX_NS: the rest of it arrives
// then, bunched, rather than an arrival delay a window-limited sender would answer with a burst.
TEST(WanLink, SpacingNeverDelaysAnArrivalMoreThanTheCap) {
  wan_params p{};
  p.rate_bps = 100000000;
  Link k(p);
  wan_link_batch(&k.l, 20 * kMs, 40);  // 500 µs apart over the 20 ms hole, were it not capped
  for (int i = 0; i < 40; i++) ASSERT_EQ(k.offer(30 * kMs, 52), WAN_QUEUED);
  EXPECT_EQ(k.l.st.spaced_max_ns, uint64_t(WAN_SPACING_MAX_NS));
  EXPECT_EQ(k.l.last_arrival_ns, 30 * kMs + WAN_SPACING_MAX_NS);
}

// What spacing a batch added is paid back: a steady stream afterwards soon arrives when it is read again.
TEST(WanLink, SpacingABatchDelaysTheStreamOnlyBriefly) {
  wan_params p{};
  p.rate_bps = 100000000;
  Link k(p);
  uint64_t t = 10 * kMs;
  wan_link_batch(&k.l, 1 * kMs, 16);  // 16 ACKs that waited 1 ms
  for (int i = 0; i < 16; i++) k.offer(t, 52);
  EXPECT_GT(k.l.last_arrival_ns, t + 800000);
  for (int i = 0; i < 200; i++) {  // then one ACK every 250 µs, one a read: 0.84 ms repaid at 25 µs a read
    t += 250000;
    uint64_t before = k.l.last_arrival_ns;
    wan_link_batch(&k.l, 250000, 1);
    k.offer(t, 52);
    EXPECT_GE(k.l.last_arrival_ns - before, 225000u) << i << ": caught up or not, never bunched";
  }
  EXPECT_EQ(k.l.last_arrival_ns, t);
}

// The DropTail queue is frozen too: what was queued at the stall's start is still queued after it, and
// a packet arriving after the stall waits behind it as if no time had passed.
TEST(WanLink, AStallFreezesTheBacklog) {
  wan_params p{};
  p.rate_bps = 100000000;
  p.delay_ns = 10 * kMs;
  Link k(p);
  for (int i = 0; i < 10; i++) ASSERT_EQ(k.offer(0, 1500), WAN_QUEUED);
  EXPECT_EQ(wan_link_backlog(&k.l, 600000), 7500u);  // 5 of 10 serialised by 600 µs
  wan_link_stall(&k.l, 5600000, 5 * kMs);           // frozen from 600 µs to 5.6 ms
  EXPECT_EQ(wan_link_backlog(&k.l, 5600000), 7500u) << "the stall served nothing";
  ASSERT_EQ(k.offer(5600000, 1500), WAN_QUEUED);
  auto due = k.drain(UINT64_MAX - 1);
  ASSERT_EQ(due.size(), 11u);
  EXPECT_EQ(due[4], 600000 + 10 * kMs + 5 * kMs) << "served before the stall, released after it";
  EXPECT_EQ(due[10], 11 * 120000 + 5 * kMs + 10 * kMs) << "the new packet queued behind the frozen ones";
}

// An idle link has nothing to freeze: a stall changes nothing for later packets, and one that froze
// the last packet leaves the next, arriving after it was released, on time.
TEST(WanLink, AStallOnAnIdleLinkChangesNothing) {
  wan_params p{};
  p.rate_bps = 100000000;
  p.delay_ns = 10 * kMs;
  Link k(p);
  wan_link_stall(&k.l, 3 * kMs, 3 * kMs);
  EXPECT_EQ(k.l.st.stall_lag_ns, 0u);
  ASSERT_EQ(k.offer(4 * kMs, 1500), WAN_QUEUED);
  EXPECT_EQ(wan_link_next_release(&k.l), 4 * kMs + 120000 + 10 * kMs);
  wan_link_stall(&k.l, 7 * kMs, 2 * kMs);
  EXPECT_EQ(k.drain(UINT64_MAX - 1).at(0), 4 * kMs + 120000 + 12 * kMs);
  ASSERT_EQ(k.offer(30 * kMs, 1500), WAN_QUEUED);
  EXPECT_EQ(wan_link_next_release(&k.l), 30 * kMs + 120000 + 10 * kMs);
}

TEST(WanLink, LatenessIsSendTimeMinusReleaseTime) {
  wan_params p{};
  Link k(p);
  wan_link_sent(&k.l, 1000, 1030);
  wan_link_sent(&k.l, 2000, 2010);
  wan_link_sent(&k.l, 3000, 2990);  // early is on time, not negative
  EXPECT_EQ(k.l.st.late_sum_ns, 40u);
  EXPECT_EQ(k.l.st.late_max_ns, 30u);
}

// Cross traffic the link makes up itself queues and serialises as read packets do, at the time given
// (no read-batch spacing), and pops marked: the emulator writes nothing for it and reports no
// lateness, and the stats count it apart.
TEST(WanLink, MadeUpCrossTrafficTakesTheLinkButIsNeverWritten) {
  wan_params p{};
  p.rate_bps = 1000000000;  // 1500 B = 12 µs
  p.delay_ns = 10 * kMs;
  p.limit_bytes = 3000;
  Link k(p);
  ASSERT_EQ(wan_link_offer_virtual(&k.l, 0, 1500), WAN_QUEUED);
  ASSERT_EQ(k.offer(1000, 1500), WAN_QUEUED);  // behind the made-up packet on the wire
  EXPECT_EQ(wan_link_offer_virtual(&k.l, 2000, 1500), WAN_DROP_QUEUE) << "the DropTail limit holds it too";
  uint64_t slot, rel;
  uint32_t len, virt;
  ASSERT_TRUE(wan_link_pop(&k.l, 30 * kMs, &slot, &len, &rel, &virt));
  EXPECT_EQ(virt, 1u);
  EXPECT_EQ(rel, 12000 + 10 * kMs);
  ASSERT_TRUE(wan_link_pop(&k.l, 30 * kMs, &slot, &len, &rel, &virt));
  EXPECT_EQ(virt, 0u);
  EXPECT_EQ(rel, 24000 + 10 * kMs) << "serialised after it";
  EXPECT_EQ(k.l.st.pkts_out, 2u);
  EXPECT_EQ(k.l.st.virt_out, 1u);
  EXPECT_EQ(k.l.st.drop_queue, 1u);
}

TEST(WanLink, RejectsASlotCountThatIsNotAPowerOfTwo) {
  wan_params p{};
  std::vector<wan_pkt> ring(6);
  wan_link l;
  EXPECT_EQ(wan_link_init(&l, &p, ring.data(), 6), -1);
  EXPECT_EQ(wan_link_init(&l, &p, ring.data(), 1), -1);
}

TEST(WanUnits, Rates) {
  uint64_t v;
  ASSERT_TRUE(wan_parse_rate("97M", &v));
  EXPECT_EQ(v, 97000000u);
  ASSERT_TRUE(wan_parse_rate("1.5Gbit", &v));
  EXPECT_EQ(v, 1500000000u);
  ASSERT_TRUE(wan_parse_rate("800k", &v));
  EXPECT_EQ(v, 800000u);
  for (const char *bad : {"", "-1M", "1X", "10Mbytes", "nan", "inf", "0x10", " 5M", "1e30G"})
    EXPECT_FALSE(wan_parse_rate(bad, &v)) << bad;
}

TEST(WanUnits, DurationsBytesProbabilities) {
  uint64_t v;
  ASSERT_TRUE(wan_parse_duration("20ms", &v));
  EXPECT_EQ(v, 20000000u);
  ASSERT_TRUE(wan_parse_duration("150us", &v));
  EXPECT_EQ(v, 150000u);
  ASSERT_TRUE(wan_parse_duration("75", &v));  // bare number: milliseconds
  EXPECT_EQ(v, 75000000u);
  EXPECT_FALSE(wan_parse_duration("20 ms", &v));
  EXPECT_FALSE(wan_parse_duration("20min", &v));
  ASSERT_TRUE(wan_parse_bytes("2.5M", &v));
  EXPECT_EQ(v, 2500000u);
  EXPECT_FALSE(wan_parse_bytes("2.5MB", &v));
  double p;
  ASSERT_TRUE(wan_parse_probability("1%", &p));
  EXPECT_DOUBLE_EQ(p, 0.01);
  EXPECT_FALSE(wan_parse_probability("1.5", &p));
  EXPECT_FALSE(wan_parse_probability("-0.1", &p));
}

}  // namespace
