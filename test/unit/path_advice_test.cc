// path_advice_test.cc — what `sobas path` advises: Tierney's buffer against this host's sysctls, GridFTP's streams.
#include <gtest/gtest.h>

#include "path_advice.h"

namespace {

// Debian 12's defaults: rmem_max/wmem_max 208 KiB, tcp_rmem max 6 MiB, tcp_wmem max 4 MiB.
sobas::PathFacts debian(uint32_t rtt_us, uint64_t cap_bps) {
  sobas::PathFacts f;
  f.rtt_us = rtt_us;
  f.cap_bps = cap_bps;
  f.rmem_max = f.wmem_max = 212992;
  f.tcp_rmem[0] = f.tcp_wmem[0] = 4096;
  f.tcp_rmem[1] = 131072;
  f.tcp_wmem[1] = 16384;
  f.tcp_rmem[2] = 6291456;
  f.tcp_wmem[2] = 4194304;
  return f;
}

TEST(PathAdvice, AGigabitAt40msNeedsTenMiBAndTheSysctlsThatAllowIt) {
  sobas::PathAdvice a = sobas::advise(debian(40000, 1000000000));
  EXPECT_EQ(a.bdp_bytes, 5000000u);
  EXPECT_EQ(a.buffer_bytes, 10u << 20) << "2 x BDP, rounded up to a MiB";
  EXPECT_FALSE(a.rcv_ok);
  EXPECT_FALSE(a.snd_ok);
  ASSERT_EQ(a.sysctl.size(), 4u);
  EXPECT_EQ(a.sysctl[0], "net.core.rmem_max=10485760");
  EXPECT_EQ(a.sysctl[2], "net.ipv4.tcp_rmem=4096 131072 10485760") << "min and default kept";
  EXPECT_EQ(a.sysctl[3], "net.ipv4.tcp_wmem=4096 16384 10485760");
  EXPECT_EQ(a.sobas_max_s, 5000000u);
}

TEST(PathAdvice, APathTheHostAlreadyAllowsNeedsNoSysctl) {
  sobas::PathFacts f = debian(20000, 100000000);  // 250 KB BDP, 1 MiB buffer
  f.rmem_max = f.wmem_max = 4u << 20;
  sobas::PathAdvice a = sobas::advise(f);
  EXPECT_TRUE(a.rcv_ok);
  EXPECT_TRUE(a.snd_ok);
  EXPECT_TRUE(a.sysctl.empty());
}

TEST(PathAdvice, WithoutCapacityOnlyTheStreamCountIsKnown) {
  sobas::PathAdvice a = sobas::advise(debian(40000, 0));
  EXPECT_EQ(a.bdp_bytes, 0u);
  EXPECT_TRUE(a.sysctl.empty());
  // 155 x 40 / 6144^0.86 (Bo: the 6 MiB buffer autotuning may reach): 3.42 streams.
  EXPECT_NEAR(a.gridftp_streams, 3.42, 0.01);
}

TEST(PathAdvice, GridftpFormulaAsPublished) {
  EXPECT_NEAR(sobas::gridftp_streams(50, 64), 216.76, 0.01);  // 155 x 50 / 64^0.86 (35.75)
  EXPECT_EQ(sobas::gridftp_streams(0, 64), 0);
  EXPECT_EQ(sobas::gridftp_streams(40, 0), 0);
}

}  // namespace
