// flowtable_test.cc — the fd slot map and flow pool: lookups, lifetimes, ranges, concurrency.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

extern "C" {
#include "flowtable.h"
}

namespace {

class FlowTableTest : public ::testing::Test {
 protected:
  void TearDown() override { sobas_ft_destroy(&t); }
  sobas_flowtable t{};
};

TEST_F(FlowTableTest, UnseenFdsAreUnknownWithoutMappingAnything) {
  EXPECT_EQ(sobas_ft_get(&t, 5), 0u);
  EXPECT_EQ(sobas_ft_get(&t, -1), 0u);
  EXPECT_EQ(sobas_ft_get(&t, SOBAS_FD_LIMIT), 0u);
  EXPECT_EQ(sobas_ft_swap(&t, 5, 0), 0u);
  EXPECT_EQ(t.fd_chunks[0], nullptr);  // storing UNKNOWN over UNKNOWN maps no chunk
}

TEST_F(FlowTableTest, SwapStoresAndReturnsThePrevious) {
  sobas_slot a = SOBAS_SLOT(SOBAS_FD_TCP, SOBAS_FDF_APP_RCVBUF, 0);
  EXPECT_EQ(sobas_ft_swap(&t, 70000, a), 0u);
  EXPECT_EQ(sobas_ft_get(&t, 70000), a);
  EXPECT_EQ(sobas_slot_kind(a), (unsigned)SOBAS_FD_TCP);
  EXPECT_EQ(sobas_slot_flags(a), SOBAS_FDF_APP_RCVBUF);
  EXPECT_EQ(sobas_ft_swap(&t, 70000, 0), a);
  EXPECT_EQ(sobas_ft_get(&t, 70000), 0u);
  EXPECT_EQ(sobas_ft_get(&t, 70001), 0u);
}

TEST_F(FlowTableTest, OutOfRangeFdsPassThrough) {
  EXPECT_EQ(sobas_ft_swap(&t, SOBAS_FD_LIMIT, SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0)), 0u);
  EXPECT_EQ(sobas_ft_get(&t, SOBAS_FD_LIMIT), 0u);
  EXPECT_FALSE(sobas_ft_cas(&t, -3, 0, SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0)));
}

TEST_F(FlowTableTest, CasOnlyReplacesTheExpected) {
  sobas_slot other = SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0);
  EXPECT_TRUE(sobas_ft_cas(&t, 3, 0, other));
  EXPECT_FALSE(sobas_ft_cas(&t, 3, 0, SOBAS_SLOT(SOBAS_FD_TCP, 0, 0)));
  EXPECT_EQ(sobas_ft_get(&t, 3), other);
}

TEST_F(FlowTableTest, FlowsGetFreshIdsAndAreReused) {
  sobas_flow *a = sobas_ft_flow_alloc(&t);
  sobas_flow *b = sobas_ft_flow_alloc(&t);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a, b);
  EXPECT_NE(a->id, b->id);
  EXPECT_EQ(a->refs, 1u);
  a->app[0] = 12345;
  sobas_ft_flow_free(&t, a);
  sobas_flow *c = sobas_ft_flow_alloc(&t);
  EXPECT_EQ(c, a);           // the freed record is taken again...
  EXPECT_EQ(c->app[0], 0u);  // ...zeroed
  EXPECT_GT(c->id, b->id);
}

TEST_F(FlowTableTest, SlotsNameFlowsKeepFlagsAndCountReferences) {
  sobas_flow *f = sobas_ft_flow_alloc(&t);
  sobas_slot s = sobas_ft_flow_slot(f, SOBAS_FDF_APP_SNDBUF);
  EXPECT_EQ(f->refs, 2u);
  EXPECT_EQ(sobas_slot_kind(s), (unsigned)SOBAS_FD_FLOW);
  EXPECT_EQ(sobas_slot_flags(s), SOBAS_FDF_APP_SNDBUF);
  EXPECT_EQ(sobas_ft_slot_flow(s), f);
  sobas_slot both = sobas_slot_with_flags(s, SOBAS_FDF_APP_RCVBUF);
  EXPECT_EQ(sobas_slot_flags(both), SOBAS_FDF_APP_SNDBUF | SOBAS_FDF_APP_RCVBUF);
  EXPECT_EQ(sobas_ft_slot_flow(both), f);
}

TEST_F(FlowTableTest, FindsLiveFlowsByInodeOnly) {
  sobas_flow *f = sobas_ft_flow_alloc(&t);
  f->inode = 4242;
  EXPECT_EQ(sobas_ft_find_inode(&t, 4242), f);
  EXPECT_EQ(f->refs, 2u);
  EXPECT_EQ(sobas_ft_find_inode(&t, 0), nullptr);  // 0 = unknown, never merged
  EXPECT_EQ(sobas_ft_find_inode(&t, 4243), nullptr);
  sobas_ft_flow_free(&t, f);
  EXPECT_EQ(sobas_ft_find_inode(&t, 4242), nullptr);
}

TEST_F(FlowTableTest, TakeRangeVisitsOnlyKnownFdsAndClearsThem) {
  std::vector<int> fds = {0, 3, 4095, 4096, 9000, 500000};
  for (int fd : fds) sobas_ft_swap(&t, fd, SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0));
  std::vector<int> seen;
  auto cb = [](void *ctx, int fd, sobas_slot) { static_cast<std::vector<int> *>(ctx)->push_back(fd); };
  sobas_ft_take_range(&t, 3, 9000, cb, &seen);
  EXPECT_EQ(seen, (std::vector<int>{3, 4095, 4096, 9000}));
  EXPECT_EQ(sobas_ft_get(&t, 4096), 0u);
  EXPECT_NE(sobas_ft_get(&t, 0), 0u);
  seen.clear();
  sobas_ft_take_range(&t, 0, ~0u, cb, &seen);  // closefrom(0): up to the top, no overflow
  EXPECT_EQ(seen, (std::vector<int>{0, 500000}));
}

TEST_F(FlowTableTest, ConcurrentAllocFreeNeverHandsOutOneRecordTwice) {
  constexpr int kThreads = 8, kRounds = 2000;
  std::atomic<int> clashes{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < kThreads; i++)
    ts.emplace_back([&, i] {
      for (int r = 0; r < kRounds; r++) {
        sobas_flow *f = sobas_ft_flow_alloc(&t);
        ASSERT_NE(f, nullptr);
        f->inode = (uint64_t)i + 1;  // owner mark
        std::this_thread::yield();
        if (f->inode != (uint64_t)i + 1) clashes++;
        sobas_ft_flow_free(&t, f);
      }
    });
  for (auto &th : ts) th.join();
  EXPECT_EQ(clashes.load(), 0);
}

TEST_F(FlowTableTest, ConcurrentFirstStoresShareOneChunk) {
  std::vector<std::thread> ts;
  for (int i = 0; i < 8; i++)
    ts.emplace_back([&, i] { sobas_ft_swap(&t, 100 + i, SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0)); });
  for (auto &th : ts) th.join();
  for (int i = 0; i < 8; i++) EXPECT_EQ(sobas_slot_kind(sobas_ft_get(&t, 100 + i)), (unsigned)SOBAS_FD_OTHER);
}

}  // namespace
