/* probe_wire.c — encoder and strict bounded decoder of the side probe's datagrams (layout in sobas/probe.h). */
#include "sobas/probe.h"

#include <string.h>

static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v) {
  put16(p, (uint16_t)(v >> 16));
  put16(p + 2, (uint16_t)v);
}
static void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)(v >> 32));
  put32(p + 4, (uint32_t)v);
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static uint32_t get32(const uint8_t *p) { return ((uint32_t)get16(p) << 16) | get16(p + 2); }
static uint64_t get64(const uint8_t *p) { return ((uint64_t)get32(p) << 32) | get32(p + 4); }

static int all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

/* The rules both directions share, on the decoded form: the encoder refuses what the decoder would. */
static int check(const struct sobas_probe_msg *m, size_t len) {
  const struct sobas_probe_flow *f = &m->flow;
  if (m->type < SOBAS_MSG_PROBE || m->type > SOBAS_MSG_LEAD) return SOBAS_PROBE_E_TYPE;
  if (m->flags & ~(m->type == SOBAS_MSG_ECHO ? SOBAS_PROBE_F_SENDER_LEADS : 0)) return SOBAS_PROBE_E_RESERVED;
  if (f->family != 4 && f->family != 6) return SOBAS_PROBE_E_FAMILY;
  if (f->family == 4 && (!all_zero(f->rcv_addr + 4, 12) || !all_zero(f->snd_addr + 4, 12)))
    return SOBAS_PROBE_E_FAMILY;
  if (f->rcv_port == 0 || f->snd_port == 0) return SOBAS_PROBE_E_RANGE;
  switch (m->type) {
  case SOBAS_MSG_PROBE:
  case SOBAS_MSG_ECHO:
    if (len != SOBAS_PROBE_LEN) return SOBAS_PROBE_E_LENGTH;
    if (m->type == SOBAS_MSG_PROBE && m->rsp_seq) return SOBAS_PROBE_E_RESERVED;
    if (m->trains || m->train_len || m->count || m->pkt_size) return SOBAS_PROBE_E_RESERVED;
    return SOBAS_PROBE_OK;
  case SOBAS_MSG_LEAD:
    if (len != SOBAS_PROBE_LEN) return SOBAS_PROBE_E_LENGTH;
    if (m->nonce || m->seq || m->ts || m->rsp_seq || m->trains || m->train_len || m->count || m->pkt_size)
      return SOBAS_PROBE_E_RESERVED;
    return SOBAS_PROBE_OK;
  case SOBAS_MSG_TRAIN_REQ:
    if (len != SOBAS_PROBE_LEN) return SOBAS_PROBE_E_LENGTH;
    if (m->ts || m->rsp_seq || m->count) return SOBAS_PROBE_E_RESERVED;
    if (m->trains < 1 || m->trains > SOBAS_TRAIN_MAX_TRAINS || m->train_len < 2 ||
        m->train_len > SOBAS_TRAIN_MAX_LEN || m->pkt_size < SOBAS_TRAIN_MIN_SIZE || m->pkt_size > SOBAS_TRAIN_MAX_SIZE)
      return SOBAS_PROBE_E_RANGE;
    return SOBAS_PROBE_OK;
  default: /* TRAIN */
    if (len < SOBAS_TRAIN_MIN_SIZE || len > SOBAS_TRAIN_MAX_SIZE || len != m->pkt_size) return SOBAS_PROBE_E_LENGTH;
    if (m->ts || m->rsp_seq) return SOBAS_PROBE_E_RESERVED;
    if (m->trains >= SOBAS_TRAIN_MAX_TRAINS || m->count < 2 || m->count > SOBAS_TRAIN_MAX_LEN ||
        m->train_len >= m->count)
      return SOBAS_PROBE_E_RANGE;
    return SOBAS_PROBE_OK;
  }
}

int sobas_probe_encode(const struct sobas_probe_msg *m, uint8_t *buf, size_t cap) {
  size_t len = m->type == SOBAS_MSG_TRAIN ? m->pkt_size : SOBAS_PROBE_LEN;
  int err = check(m, len);
  if (err) return err;
  if (cap < len) return SOBAS_PROBE_E_LENGTH;
  memset(buf, 0, len);
  buf[0] = 'S';
  buf[1] = 'B';
  buf[2] = SOBAS_PROBE_VERSION;
  buf[3] = m->type;
  buf[4] = m->flow.family;
  buf[5] = m->flags;
  put16(buf + 6, (uint16_t)len);
  put16(buf + 8, m->flow.rcv_port);
  put16(buf + 10, m->flow.snd_port);
  memcpy(buf + 12, m->flow.rcv_addr, 16);
  memcpy(buf + 28, m->flow.snd_addr, 16);
  put32(buf + 44, m->nonce);
  put32(buf + 48, m->seq);
  if (m->type == SOBAS_MSG_PROBE || m->type == SOBAS_MSG_ECHO || m->type == SOBAS_MSG_LEAD) {
    put64(buf + 52, m->ts);
  } else {
    buf[52] = m->trains;
    put16(buf + 54, m->train_len);
    put16(buf + 56, m->type == SOBAS_MSG_TRAIN ? m->count : m->pkt_size);
  }
  put32(buf + 60, m->rsp_seq);
  return (int)len;
}

int sobas_probe_decode(const uint8_t *buf, size_t len, struct sobas_probe_msg *m) {
  memset(m, 0, sizeof *m);
  if (len < SOBAS_PROBE_HDR_LEN) return SOBAS_PROBE_E_SHORT;
  if (buf[0] != 'S' || buf[1] != 'B') return SOBAS_PROBE_E_MAGIC;
  if (buf[2] != SOBAS_PROBE_VERSION) return SOBAS_PROBE_E_VERSION;
  if (buf[3] < SOBAS_MSG_PROBE || buf[3] > SOBAS_MSG_LEAD) return SOBAS_PROBE_E_TYPE;
  if (get16(buf + 6) != len) return SOBAS_PROBE_E_LENGTH;
  m->type = buf[3];
  m->flags = buf[5];
  m->flow.family = buf[4];
  m->flow.rcv_port = get16(buf + 8);
  m->flow.snd_port = get16(buf + 10);
  memcpy(m->flow.rcv_addr, buf + 12, 16);
  memcpy(m->flow.snd_addr, buf + 28, 16);
  m->nonce = get32(buf + 44);
  m->seq = get32(buf + 48);
  if (m->type == SOBAS_MSG_PROBE || m->type == SOBAS_MSG_ECHO || m->type == SOBAS_MSG_LEAD) {
    m->ts = get64(buf + 52);
  } else {
    if (buf[53] != 0 || buf[58] != 0 || buf[59] != 0) {
      memset(m, 0, sizeof *m);
      return SOBAS_PROBE_E_RESERVED;
    }
    m->trains = buf[52];
    m->train_len = get16(buf + 54);
    if (m->type == SOBAS_MSG_TRAIN) {
      m->count = get16(buf + 56);
      m->pkt_size = (uint16_t)len;
    } else {
      m->pkt_size = get16(buf + 56);
    }
  }
  m->rsp_seq = get32(buf + 60);
  int err = check(m, len);
  if (err == SOBAS_PROBE_OK && !all_zero(buf + SOBAS_PROBE_HDR_LEN, len - SOBAS_PROBE_HDR_LEN))
    err = SOBAS_PROBE_E_RESERVED;
  if (err) memset(m, 0, sizeof *m);
  return err;
}

const char *sobas_probe_err_name(int err) {
  static const char *const names[SOBAS_PROBE_N_ERRORS] = {"ok",     "short",  "magic",    "version", "type",
                                                          "length", "family", "reserved", "range"};
  return err <= 0 && -err < SOBAS_PROBE_N_ERRORS ? names[-err] : "?";
}
