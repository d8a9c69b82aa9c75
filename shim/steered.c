/* steered.c — the steered-flows table's slots (sobas/steered.h): sobasd writes, a preloaded sender reads; no syscalls. */
#include "sobas/steered.h"

#include <string.h>

static uint32_t hash_flow(const struct sobas_probe_flow *f) {
  uint32_t h = 2166136261u; /* FNV-1a */
  uint8_t head[5] = {f->family, (uint8_t)(f->snd_port >> 8), (uint8_t)f->snd_port, (uint8_t)(f->rcv_port >> 8),
                     (uint8_t)f->rcv_port};
  for (unsigned i = 0; i < sizeof head; i++) h = (h ^ head[i]) * 16777619u;
  for (unsigned i = 0; i < 16; i++) h = (h ^ f->snd_addr[i]) * 16777619u;
  for (unsigned i = 0; i < 16; i++) h = (h ^ f->rcv_addr[i]) * 16777619u;
  return h;
}

static int same_flow(const struct sobas_steered_slot *s, const struct sobas_probe_flow *f) {
  return s->family == f->family && s->snd_port == f->snd_port && s->rcv_port == f->rcv_port &&
         memcmp(s->snd_addr, f->snd_addr, 16) == 0 && memcmp(s->rcv_addr, f->rcv_addr, 16) == 0;
}

void sobas_steered_init(struct sobas_steered_table *t) {
  t->magic = SOBAS_STEERED_MAGIC;
  t->version = SOBAS_STEERED_VERSION;
  t->slot_size = (uint16_t)sizeof(struct sobas_steered_slot);
  t->slots = SOBAS_STEERED_SLOTS;
}

int sobas_steered_valid(const struct sobas_steered_table *t) {
  return t->magic == SOBAS_STEERED_MAGIC && t->version == SOBAS_STEERED_VERSION &&
         t->slot_size == sizeof(struct sobas_steered_slot) && t->slots == SOBAS_STEERED_SLOTS;
}

static int fresh(int64_t seen_ns, int64_t now_ns) { return seen_ns && now_ns - seen_ns < SOBAS_STEERED_FRESH_NS; }

int sobas_steered_put(struct sobas_steered_table *t, const struct sobas_probe_flow *f, int64_t now_ns) {
  uint32_t h = hash_flow(f);
  struct sobas_steered_slot *free_slot = NULL;
  for (uint32_t i = 0; i < SOBAS_STEERED_PROBES; i++) {
    struct sobas_steered_slot *s = &t->slot[(h + i) % SOBAS_STEERED_SLOTS];
    if (same_flow(s, f) && fresh(s->seen_ns, now_ns)) {
      if (now_ns - s->seen_ns >= SOBAS_STEERED_REFRESH_NS) __atomic_store_n(&s->seen_ns, now_ns, __ATOMIC_RELEASE);
      return 0;
    }
    if (!free_slot && !fresh(s->seen_ns, now_ns)) free_slot = s;
  }
  if (!free_slot) return -1;
  /* The one writer: odd seq, the fields, even seq; a reader that saw either odd or two values retries. */
  uint32_t seq = free_slot->seq;
  __atomic_store_n(&free_slot->seq, seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  free_slot->family = f->family;
  free_slot->snd_port = f->snd_port;
  free_slot->rcv_port = f->rcv_port;
  memcpy(free_slot->snd_addr, f->snd_addr, 16);
  memcpy(free_slot->rcv_addr, f->rcv_addr, 16);
  __atomic_store_n(&free_slot->seen_ns, now_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&free_slot->seq, seq + 2, __ATOMIC_RELEASE);
  return 0;
}

/* One consistent read of a slot: 1 and *out filled, or 0 when sobasd was writing it throughout. */
static int read_slot(const struct sobas_steered_slot *s, struct sobas_steered_slot *out) {
  for (int tries = 0; tries < 4; tries++) {
    uint32_t a = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
    if (a & 1) continue;
    out->family = __atomic_load_n(&s->family, __ATOMIC_RELAXED);
    out->snd_port = __atomic_load_n(&s->snd_port, __ATOMIC_RELAXED);
    out->rcv_port = __atomic_load_n(&s->rcv_port, __ATOMIC_RELAXED);
    for (int i = 0; i < 16; i++) {
      out->snd_addr[i] = __atomic_load_n(&s->snd_addr[i], __ATOMIC_RELAXED);
      out->rcv_addr[i] = __atomic_load_n(&s->rcv_addr[i], __ATOMIC_RELAXED);
    }
    out->seen_ns = __atomic_load_n(&s->seen_ns, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == a) return 1;
  }
  return 0;
}

int sobas_steered_has(const struct sobas_steered_table *t, const struct sobas_probe_flow *f, int64_t now_ns) {
  uint32_t h = hash_flow(f);
  for (uint32_t i = 0; i < SOBAS_STEERED_PROBES; i++) {
    struct sobas_steered_slot s;
    if (read_slot(&t->slot[(h + i) % SOBAS_STEERED_SLOTS], &s) && same_flow(&s, f) && fresh(s.seen_ns, now_ns))
      return 1;
  }
  return 0;
}
