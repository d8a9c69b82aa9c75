// probe_wire_test.cc — the side probe's codec: round trips of every message type, and rejection of every malformed field.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "sobas/probe.h"

namespace {

constexpr int kOkIfLengthSet = 1;  // not an error: the case must decode

sobas_probe_msg probe4() {
  sobas_probe_msg m{};
  m.type = SOBAS_MSG_PROBE;
  m.flow.family = 4;
  m.flow.rcv_port = 50686;
  m.flow.snd_port = 8080;
  const uint8_t rcv[4] = {10, 80, 2, 1}, snd[4] = {10, 80, 1, 1};
  std::memcpy(m.flow.rcv_addr, rcv, 4);
  std::memcpy(m.flow.snd_addr, snd, 4);
  m.nonce = 0xdeadbeef;
  m.seq = 7;
  m.ts = 0x0123456789abcdefull;
  return m;
}

sobas_probe_msg train_req() {
  sobas_probe_msg m = probe4();
  m.type = SOBAS_MSG_TRAIN_REQ;
  m.ts = 0;
  m.trains = 5;
  m.train_len = 32;
  m.pkt_size = 1460;
  return m;
}

// What a preloaded sender tells its own host's sobasd: the flow only.
sobas_probe_msg lead() {
  sobas_probe_msg m = probe4();
  m.type = SOBAS_MSG_LEAD;
  m.nonce = m.seq = 0;
  m.ts = 0;
  return m;
}

sobas_probe_msg train_pkt() {
  sobas_probe_msg m = train_req();
  m.type = SOBAS_MSG_TRAIN;
  m.trains = 4;
  m.train_len = 31;
  m.count = 32;
  m.pkt_size = 1460;
  return m;
}

std::vector<uint8_t> encode(const sobas_probe_msg &m) {
  std::vector<uint8_t> b(2048);
  int n = sobas_probe_encode(&m, b.data(), b.size());
  EXPECT_GT(n, 0) << sobas_probe_err_name(n);
  b.resize(n > 0 ? n : 0);
  return b;
}

int decode(const std::vector<uint8_t> &b, sobas_probe_msg *m = nullptr) {
  sobas_probe_msg tmp;
  return sobas_probe_decode(b.data(), b.size(), m ? m : &tmp);
}

void expect_same(const sobas_probe_msg &a, const sobas_probe_msg &b) {
  EXPECT_EQ(std::memcmp(&a.flow, &b.flow, sizeof a.flow), 0);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.nonce, b.nonce);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.ts, b.ts);
  EXPECT_EQ(a.rsp_seq, b.rsp_seq);
  EXPECT_EQ(a.trains, b.trains);
  EXPECT_EQ(a.train_len, b.train_len);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.pkt_size, b.pkt_size);
}

TEST(ProbeWire, EveryTypeRoundTrips) {
  sobas_probe_msg echo = probe4();
  echo.type = SOBAS_MSG_ECHO;
  echo.rsp_seq = 0xfffffffe;
  sobas_probe_msg leads = echo;
  leads.flags = SOBAS_PROBE_F_SENDER_LEADS;
  sobas_probe_msg v6 = probe4();
  v6.flow.family = 6;
  for (int i = 0; i < 16; i++) v6.flow.rcv_addr[i] = uint8_t(0x20 + i), v6.flow.snd_addr[i] = uint8_t(0x40 + i);
  for (const auto &m : {probe4(), echo, leads, train_req(), train_pkt(), lead(), v6}) {
    auto b = encode(m);
    EXPECT_EQ(b.size(), m.type == SOBAS_MSG_TRAIN ? 1460u : size_t(SOBAS_PROBE_LEN));
    sobas_probe_msg d;
    ASSERT_EQ(decode(b, &d), SOBAS_PROBE_OK) << int(m.type);
    expect_same(m, d);
  }
}

TEST(ProbeWire, WireLayoutIsTheDocumentedOne) {
  auto b = encode(probe4());
  EXPECT_EQ(b[0], 'S');
  EXPECT_EQ(b[1], 'B');
  EXPECT_EQ(b[2], SOBAS_PROBE_VERSION);
  EXPECT_EQ(b[3], SOBAS_MSG_PROBE);
  EXPECT_EQ(b[4], 4);
  EXPECT_EQ((b[6] << 8) | b[7], SOBAS_PROBE_LEN);
  EXPECT_EQ((b[8] << 8) | b[9], 50686);  // rcv_port, big-endian
  EXPECT_EQ(b[12], 10);                  // rcv_addr
  EXPECT_EQ(b[29], 80);                  // snd_addr
  EXPECT_EQ(b[44], 0xde);                // nonce
  EXPECT_EQ(b[51], 7);                   // seq
  EXPECT_EQ(b[52], 0x01);                // ts
  EXPECT_EQ(b[59], 0xef);
}

// Each case breaks one field of a valid datagram; the decoder must name what is wrong.
TEST(ProbeWire, RejectsEveryMalformedField) {
  struct Case {
    const char *what;
    sobas_probe_msg (*base)();
    void (*mutate)(std::vector<uint8_t> &);
    int err;
  };
  const Case cases[] = {
      {"empty", probe4, [](std::vector<uint8_t> &b) { b.clear(); }, SOBAS_PROBE_E_SHORT},
      {"63 bytes", probe4, [](std::vector<uint8_t> &b) { b.resize(63); }, SOBAS_PROBE_E_SHORT},
      {"magic", probe4, [](std::vector<uint8_t> &b) { b[1] = 'X'; }, SOBAS_PROBE_E_MAGIC},
      {"version 2", probe4, [](std::vector<uint8_t> &b) { b[2] = 2; }, SOBAS_PROBE_E_VERSION},
      {"version 0", probe4, [](std::vector<uint8_t> &b) { b[2] = 0; }, SOBAS_PROBE_E_VERSION},
      {"type 0", probe4, [](std::vector<uint8_t> &b) { b[3] = 0; }, SOBAS_PROBE_E_TYPE},
      {"type 6", probe4, [](std::vector<uint8_t> &b) { b[3] = 6; }, SOBAS_PROBE_E_TYPE},
      {"family 5", probe4, [](std::vector<uint8_t> &b) { b[4] = 5; }, SOBAS_PROBE_E_FAMILY},
      {"v4 rcv high bytes", probe4, [](std::vector<uint8_t> &b) { b[20] = 1; }, SOBAS_PROBE_E_FAMILY},
      {"v4 snd high bytes", probe4, [](std::vector<uint8_t> &b) { b[43] = 1; }, SOBAS_PROBE_E_FAMILY},
      {"flags", probe4, [](std::vector<uint8_t> &b) { b[5] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"echo's unknown flag", [] { auto m = probe4(); m.type = SOBAS_MSG_ECHO; return m; },
       [](std::vector<uint8_t> &b) { b[5] = 2; }, SOBAS_PROBE_E_RESERVED},
      {"lead with flags", lead, [](std::vector<uint8_t> &b) { b[5] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"lead with a nonce", lead, [](std::vector<uint8_t> &b) { b[47] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"lead with ts", lead, [](std::vector<uint8_t> &b) { b[59] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"lead short", lead, [](std::vector<uint8_t> &b) { b.resize(99); b[7] = 99; }, SOBAS_PROBE_E_LENGTH},
      {"length field", probe4, [](std::vector<uint8_t> &b) { b[7] = 99; }, SOBAS_PROBE_E_LENGTH},
      {"datagram longer", probe4, [](std::vector<uint8_t> &b) { b.push_back(0); }, SOBAS_PROBE_E_LENGTH},
      {"probe 101 bytes both", probe4, [](std::vector<uint8_t> &b) { b.push_back(0); b[7] = 101; }, SOBAS_PROBE_E_LENGTH},
      {"rcv port 0", probe4, [](std::vector<uint8_t> &b) { b[8] = b[9] = 0; }, SOBAS_PROBE_E_RANGE},
      {"snd port 0", probe4, [](std::vector<uint8_t> &b) { b[10] = b[11] = 0; }, SOBAS_PROBE_E_RANGE},
      {"probe with rsp_seq", probe4, [](std::vector<uint8_t> &b) { b[63] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"padding", probe4, [](std::vector<uint8_t> &b) { b[99] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"req trains 0", train_req, [](std::vector<uint8_t> &b) { b[52] = 0; }, SOBAS_PROBE_E_RANGE},
      {"req trains 9", train_req, [](std::vector<uint8_t> &b) { b[52] = 9; }, SOBAS_PROBE_E_RANGE},
      {"req reserved 53", train_req, [](std::vector<uint8_t> &b) { b[53] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"req train_len 1", train_req, [](std::vector<uint8_t> &b) { b[54] = 0; b[55] = 1; }, SOBAS_PROBE_E_RANGE},
      {"req train_len 65", train_req, [](std::vector<uint8_t> &b) { b[54] = 0; b[55] = 65; }, SOBAS_PROBE_E_RANGE},
      {"req pkt_size 63", train_req, [](std::vector<uint8_t> &b) { b[56] = 0; b[57] = 63; }, SOBAS_PROBE_E_RANGE},
      {"req pkt_size 1473", train_req, [](std::vector<uint8_t> &b) { b[56] = 0x05; b[57] = 0xc1; }, SOBAS_PROBE_E_RANGE},
      {"req reserved 58", train_req, [](std::vector<uint8_t> &b) { b[58] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"req rsp_seq", train_req, [](std::vector<uint8_t> &b) { b[60] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"train index = count", train_pkt, [](std::vector<uint8_t> &b) { b[55] = 32; }, SOBAS_PROBE_E_RANGE},
      {"train count 1", train_pkt, [](std::vector<uint8_t> &b) { b[57] = 1; b[55] = 0; }, SOBAS_PROBE_E_RANGE},
      {"train count 65", train_pkt, [](std::vector<uint8_t> &b) { b[57] = 65; }, SOBAS_PROBE_E_RANGE},
      {"train number 8", train_pkt, [](std::vector<uint8_t> &b) { b[52] = 8; }, SOBAS_PROBE_E_RANGE},
      {"train reserved 59", train_pkt, [](std::vector<uint8_t> &b) { b[59] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"train padding", train_pkt, [](std::vector<uint8_t> &b) { b[1000] = 1; }, SOBAS_PROBE_E_RESERVED},
      {"train cut short", train_pkt, [](std::vector<uint8_t> &b) { b.resize(1000); b[6] = 0x03; b[7] = 0xe8; },
       kOkIfLengthSet},
  };
  for (const auto &c : cases) {
    auto b = encode(c.base());
    c.mutate(b);
    sobas_probe_msg m;
    std::memset(&m, 0xaa, sizeof m);
    int err = sobas_probe_decode(b.data(), b.size(), &m);
    if (c.err == kOkIfLengthSet) {
      EXPECT_EQ(err, SOBAS_PROBE_OK) << c.what << ": a shorter train packet is still a train packet";
      EXPECT_EQ(m.pkt_size, 1000) << c.what;
      continue;
    }
    EXPECT_EQ(err, c.err) << c.what << ": got " << sobas_probe_err_name(err);
    sobas_probe_msg zero{};
    EXPECT_EQ(std::memcmp(&m, &zero, sizeof m), 0) << c.what << ": a refused datagram leaves nothing behind";
  }
}

TEST(ProbeWire, EncoderRefusesWhatTheDecoderWould) {
  uint8_t b[2048];
  sobas_probe_msg m = probe4();
  m.flow.family = 3;
  EXPECT_EQ(sobas_probe_encode(&m, b, sizeof b), SOBAS_PROBE_E_FAMILY);
  m = train_req();
  m.trains = 0;
  EXPECT_EQ(sobas_probe_encode(&m, b, sizeof b), SOBAS_PROBE_E_RANGE);
  m = probe4();
  EXPECT_EQ(sobas_probe_encode(&m, b, 99), SOBAS_PROBE_E_LENGTH) << "buffer too small";
  m = train_pkt();
  m.pkt_size = 2000;
  EXPECT_EQ(sobas_probe_encode(&m, b, sizeof b), SOBAS_PROBE_E_LENGTH);
}

// Bounded decoding: random bytes and single-byte mutations of valid datagrams never read out of bounds
// (ASan build) and are either refused or decode to something that re-encodes to the same bytes.
TEST(ProbeWire, RandomAndMutatedInputAreDecodedSafely) {
  std::mt19937 rng(1234);
  std::vector<std::vector<uint8_t>> seeds = {encode(probe4()), encode(train_req()), encode(train_pkt())};
  int accepted = 0;
  for (int i = 0; i < 200000; i++) {
    std::vector<uint8_t> b;
    if (i % 2) {
      b.resize(rng() % 1600);
      for (auto &x : b) x = uint8_t(rng());
    } else {
      b = seeds[i % 3];
      b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
    }
    auto *heap = new uint8_t[b.size() ? b.size() : 1];  // exact-size buffer: ASan sees any over-read
    if (!b.empty()) std::memcpy(heap, b.data(), b.size());
    sobas_probe_msg m;
    if (sobas_probe_decode(heap, b.size(), &m) == SOBAS_PROBE_OK) {
      accepted++;
      std::vector<uint8_t> again(2048);
      int n = sobas_probe_encode(&m, again.data(), again.size());
      ASSERT_EQ(n, int(b.size()));
      again.resize(n);
      EXPECT_EQ(again, b);
    }
    delete[] heap;
  }
  EXPECT_GT(accepted, 0) << "mutations of free fields (nonce, seq, ts) must still decode";
}

TEST(ProbeWire, ErrorNames) {
  for (int e = 0; e > -SOBAS_PROBE_N_ERRORS; e--) EXPECT_STRNE(sobas_probe_err_name(e), "?");
  EXPECT_STREQ(sobas_probe_err_name(-100), "?");
}

}  // namespace
