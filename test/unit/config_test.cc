// config_test.cc — settings parsing: defaults, good and bad values, config file text, environment.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include "config.h"
}

namespace {

std::vector<std::string> g_warnings;
void collect(void *, const char *line) { g_warnings.emplace_back(line); }

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_warnings.clear();
    sobas_config_default(&c);
  }
  sobas_config c;
};

TEST_F(ConfigTest, DefaultsAreQuietAndOn) {
  EXPECT_EQ(c.disable, 0);
  EXPECT_STREQ(c.log_path, "");
  EXPECT_EQ(c.bulk_bytes, 256u * 1024);
  EXPECT_EQ(c.track_loopback, 0);
  EXPECT_EQ(c.meas.min_window_us, 10000u);
}

TEST_F(ConfigTest, SizesAcceptSuffixes) {
  uint64_t v;
  ASSERT_EQ(sobas_parse_size("4096", &v), 0);
  EXPECT_EQ(v, 4096u);
  ASSERT_EQ(sobas_parse_size("64K", &v), 0);
  EXPECT_EQ(v, 65536u);
  ASSERT_EQ(sobas_parse_size("3m", &v), 0);
  EXPECT_EQ(v, 3u << 20);
  ASSERT_EQ(sobas_parse_size("2G", &v), 0);
  EXPECT_EQ(v, 2ull << 30);
}

TEST_F(ConfigTest, SizesRejectGarbageAndOverflow) {
  uint64_t v = 7;
  for (const char *bad : {"", "K", "-1", "1.5M", "12KB", "abc", " 1", "99999999999999999999",
                          "17179869184G"})
    EXPECT_NE(sobas_parse_size(bad, &v), 0) << bad;
  EXPECT_EQ(v, 7u);
}

TEST_F(ConfigTest, BooleansInEveryUsualSpelling) {
  int b;
  for (const char *t : {"1", "yes", "TRUE", "On"}) {
    ASSERT_EQ(sobas_parse_bool(t, &b), 0) << t;
    EXPECT_EQ(b, 1);
  }
  for (const char *f : {"0", "no", "false", "OFF"}) {
    ASSERT_EQ(sobas_parse_bool(f, &b), 0) << f;
    EXPECT_EQ(b, 0);
  }
  EXPECT_NE(sobas_parse_bool("2", &b), 0);
  EXPECT_NE(sobas_parse_bool("", &b), 0);
}

TEST_F(ConfigTest, BadValueWarnsOnceNamingKeyAndDefault) {
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_BULK_BYTES", "lots", collect, nullptr), -1);
  ASSERT_EQ(g_warnings.size(), 1u);
  EXPECT_NE(g_warnings[0].find("SOBAS_BULK_BYTES=\"lots\""), std::string::npos) << g_warnings[0];
  EXPECT_NE(g_warnings[0].find("default (256K)"), std::string::npos) << g_warnings[0];
  EXPECT_EQ(c.bulk_bytes, 256u * 1024);
}

TEST_F(ConfigTest, LogPathMustBeAbsolute) {
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_LOG", "relative.log", collect, nullptr), -1);
  EXPECT_STREQ(c.log_path, "");
  ASSERT_EQ(g_warnings.size(), 1u);
  EXPECT_NE(g_warnings[0].find("absolute"), std::string::npos);
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_LOG", "/tmp/x.log", collect, nullptr), 0);
  EXPECT_STREQ(c.log_path, "/tmp/x.log");
  /* "off", the default the manual names, turns a log set earlier off again, quietly. */
  EXPECT_EQ(sobas_config_set(&c, "log", "off", collect, nullptr), 0);
  EXPECT_STREQ(c.log_path, "");
  EXPECT_EQ(g_warnings.size(), 1u);
}

std::string read_source(const char *rel) {
  std::ifstream in(std::string(SOBAS_SOURCE_DIR) + "/" + rel);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/* The shipped /etc/sobas/sobas.conf shows every key at its default: uncommenting all of them must
 * parse without a warning and change nothing. */
TEST_F(ConfigTest, ShippedConfFileNamesEveryKeyAtItsDefault) {
  std::string text = read_source("shim/sobas.conf");
  ASSERT_FALSE(text.empty());
  for (size_t i = 0; const char *key = sobas_config_file_key(i); i++)
    EXPECT_NE(text.find(std::string(key) + " = "), std::string::npos) << key << " is not in sobas.conf";
  std::string uncommented;
  std::regex setting("^# ([a-z_]+ = .*)$");
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, setting)) uncommented += m[1].str() + "\n", n++;
  }
  EXPECT_GE(n, 10);
  sobas_config parsed;
  sobas_config_default(&parsed);
  sobas_config_parse_text(&parsed, uncommented.c_str(), "sobas.conf", collect, nullptr);
  EXPECT_TRUE(g_warnings.empty()) << g_warnings[0];
  EXPECT_EQ(memcmp(&parsed, &c, sizeof c), 0) << "a commented value in sobas.conf is not the default";
}

TEST_F(ConfigTest, ManualNamesEveryKey) {
  std::string page = read_source("docs/man/sobas.conf.5");
  ASSERT_FALSE(page.empty());
  for (size_t i = 0; const char *key = sobas_config_file_key(i); i++)
    EXPECT_TRUE(std::regex_search(page, std::regex("(^|\\n)\\.BR [^\\n]*\\b" + std::string(key) + "\\b")))
        << key << " is not in sobas.conf(5)";
}

TEST_F(ConfigTest, WindowBoundsAreMilliseconds) {
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_MIN_WINDOW_MS", "25", collect, nullptr), 0);
  EXPECT_EQ(c.meas.min_window_us, 25000u);
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_MAX_WINDOW_MS", "0", collect, nullptr), -1);
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_MAX_WINDOW_MS", "600000", collect, nullptr), -1);
  EXPECT_EQ(c.meas.max_window_us, 2000000u);
}

TEST_F(ConfigTest, UnknownKeyIsNotOurs) {
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_NOPE", "1", collect, nullptr), -2);
  EXPECT_TRUE(g_warnings.empty());
}

TEST_F(ConfigTest, FileTextWithCommentsBlankLinesAndMistakes) {
  const char *text =
      "# sobas.conf\n"
      "\n"
      "bulk_bytes = 1M   # one mebibyte\n"
      "  track_loopback=yes\n"
      "SOBAS_LOG = /var/log/sobas.log\n"
      "frobnicate = 3\n"
      "this line has no equals sign\n"
      "min_window_ms = never";  // no trailing newline
  sobas_config_parse_text(&c, text, "test.conf", collect, nullptr);
  EXPECT_EQ(c.bulk_bytes, 1u << 20);
  EXPECT_EQ(c.track_loopback, 1);
  EXPECT_STREQ(c.log_path, "/var/log/sobas.log");
  EXPECT_EQ(c.meas.min_window_us, 10000u);
  ASSERT_EQ(g_warnings.size(), 3u);
  EXPECT_NE(g_warnings[0].find("test.conf:6: unknown key \"frobnicate\""), std::string::npos) << g_warnings[0];
  EXPECT_NE(g_warnings[1].find("test.conf:7: expected key = value"), std::string::npos) << g_warnings[1];
  EXPECT_NE(g_warnings[2].find("SOBAS_MIN_WINDOW_MS=\"never\""), std::string::npos) << g_warnings[2];
}

std::map<std::string, std::string> g_env;
char *fake_getenv(const char *k) {
  auto it = g_env.find(k);
  return it == g_env.end() ? nullptr : const_cast<char *>(it->second.c_str());
}

TEST_F(ConfigTest, EnvironmentOverridesAndWarnsPerBadKey) {
  sobas_config_parse_text(&c, "bulk_bytes = 1M\n", "f", collect, nullptr);
  g_env = {{"SOBAS_BULK_BYTES", "2M"}, {"SOBAS_TRACK_LOOPBACK", "maybe"}, {"HOME", "/root"}};
  sobas_config_apply_env(&c, fake_getenv, collect, nullptr);
  EXPECT_EQ(c.bulk_bytes, 2u << 20);
  EXPECT_EQ(c.track_loopback, 0);
  ASSERT_EQ(g_warnings.size(), 1u);
  EXPECT_NE(g_warnings[0].find("SOBAS_TRACK_LOOPBACK"), std::string::npos);
}

}  // namespace

namespace {

TEST_F(ConfigTest, PolicyDefaultsToSobasAndAcceptsOff) {
  EXPECT_EQ(c.policy, SOBAS_POLICY_SOBAS);
  EXPECT_EQ(c.reeval_ms, 0u);
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_POLICY", "off", collect, nullptr), 0);
  EXPECT_EQ(c.policy, SOBAS_POLICY_OFF);
  EXPECT_EQ(sobas_config_set(&c, "policy", "SOBAS", collect, nullptr), 0);
  EXPECT_EQ(c.policy, SOBAS_POLICY_SOBAS);
  EXPECT_TRUE(g_warnings.empty());
}

TEST_F(ConfigTest, UnknownPolicyWarnsAndKeepsSobas) {
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_POLICY", "bbr", collect, nullptr), -1);
  EXPECT_EQ(c.policy, SOBAS_POLICY_SOBAS);
  ASSERT_EQ(g_warnings.size(), 1u);
  EXPECT_NE(g_warnings[0].find("SOBAS_POLICY=\"bbr\" is not a policy (sobas, off, bdp, drs, fixed:BYTES)"),
            std::string::npos);
}

TEST_F(ConfigTest, TheSeedsPoliciesParseAndFixedNeedsASize) {
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_POLICY", "bdp", collect, nullptr), 0);
  EXPECT_EQ(c.policy, SOBAS_POLICY_BDP);
  EXPECT_EQ(sobas_config_set(&c, "policy", "DRS", collect, nullptr), 0);
  EXPECT_EQ(c.policy, SOBAS_POLICY_DRS);
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_POLICY", "fixed:550K", collect, nullptr), 0);
  EXPECT_EQ(c.policy, SOBAS_POLICY_FIXED);
  EXPECT_EQ(c.policy_bytes, 550u * 1024);
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_BDP_BYTES", "4M", collect, nullptr), 0);
  EXPECT_EQ(c.bdp_bytes, 4u << 20);
  EXPECT_TRUE(g_warnings.empty());
  for (const char *bad : {"fixed", "fixed:", "fixed:0", "fixed:lots", "bdp:4M"}) {
    EXPECT_EQ(sobas_config_set(&c, "SOBAS_POLICY", bad, collect, nullptr), -1) << bad;
    EXPECT_EQ(c.policy, SOBAS_POLICY_FIXED) << bad << ": the last good value stays";
  }
  EXPECT_EQ(g_warnings.size(), 5u);
}

TEST_F(ConfigTest, SendersAreSteeredUnlessTurnedOff) {
  EXPECT_EQ(c.sender, 1);
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_SENDER", "0", collect, nullptr), 0);
  EXPECT_EQ(c.sender, 0);
  EXPECT_EQ(sobas_config_set(&c, "sender", "maybe", collect, nullptr), -1);
  EXPECT_EQ(c.sender, 0);
  ASSERT_EQ(g_warnings.size(), 1u);
  EXPECT_NE(g_warnings[0].find("SOBAS_SENDER"), std::string::npos);
}

TEST_F(ConfigTest, ReevaluationPeriodAllowsZeroAndRejectsJunk) {
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_REEVAL_MS", "30000", collect, nullptr), 0);
  EXPECT_EQ(c.reeval_ms, 30000u);
  EXPECT_EQ(sobas_config_set(&c, "reeval_ms", "0", collect, nullptr), 0);
  EXPECT_EQ(c.reeval_ms, 0u);
  EXPECT_EQ(sobas_config_set(&c, "SOBAS_REEVAL_MS", "-5", collect, nullptr), -1);
  EXPECT_EQ(g_warnings.size(), 1u);
}

}  // namespace
