// envfix_test.cc — LD_PRELOAD kept in environments handed to exec.
#include <gtest/gtest.h>

#include <string>
#include <vector>

extern "C" {
#include "envfix.h"
}

namespace {

const char *kLib = "/usr/lib/x86_64-linux-gnu/libsobas.so";

std::vector<std::string> run(std::vector<const char *> env) {
  env.push_back(nullptr);
  char *const *envp = const_cast<char *const *>(env.data());
  std::vector<char *> out(sobas_env_count(envp) + 2);
  std::string buf(sobas_env_preload_len(envp, kLib), '\0');
  char *const *r = sobas_env_with_preload(envp, kLib, out.data(), buf.data());
  std::vector<std::string> v;
  for (size_t i = 0; r[i]; i++) v.emplace_back(r[i]);
  return v;
}

TEST(EnvFix, AddsPreloadWhenMissing) {
  auto v = run({"PATH=/bin", "HOME=/root"});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], "PATH=/bin");
  EXPECT_EQ(v[2], std::string("LD_PRELOAD=") + kLib);
}

TEST(EnvFix, AppendsAfterTheHostsOwnPreloads) {
  auto v = run({"LD_PRELOAD=/opt/libother.so", "X=1"});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], std::string("LD_PRELOAD=/opt/libother.so:") + kLib);
  EXPECT_EQ(v[1], "X=1");
}

TEST(EnvFix, LeavesAnEnvironmentThatAlreadyPreloadsUs) {
  for (const char *e : {"LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libsobas.so", "LD_PRELOAD=libsobas.so",
                        "LD_PRELOAD=/a/liba.so /build/shim/libsobas.so", "LD_PRELOAD=liba.so:libsobas.so:libb.so"}) {
    std::vector<const char *> env = {"A=1", e, nullptr};
    char *const *envp = const_cast<char *const *>(env.data());
    std::vector<char *> out(4);
    std::string buf(sobas_env_preload_len(envp, kLib), '\0');
    EXPECT_EQ(sobas_env_with_preload(envp, kLib, out.data(), buf.data()), envp) << e;
  }
}

TEST(EnvFix, ANameThatOnlyContainsOursIsNotOurs) {
  auto v = run({"LD_PRELOAD=/x/libsobas.so.bak"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], std::string("LD_PRELOAD=/x/libsobas.so.bak:") + kLib);
}

TEST(EnvFix, EmptyAndNullEnvironments) {
  EXPECT_EQ(run({}).size(), 1u);
  EXPECT_EQ(run({"LD_PRELOAD="}).front(), std::string("LD_PRELOAD=") + kLib);
  EXPECT_EQ(sobas_env_count(nullptr), 0u);
}

}  // namespace
