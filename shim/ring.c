/* ring.c — the decision ring's lock-free writer and reader on a mapped ring (pure: no syscalls; shared by the shim and sobas-top). */
#include "sobas/ring.h"

#include <string.h>

#define WORDS ((SOBAS_RING_PAYLOAD_END - SOBAS_RING_PAYLOAD_OFFSET) / 8)

static struct sobas_ring_record *slot_of(const struct sobas_ring_map *m, uint64_t n) {
  char *base = (char *)m->h + SOBAS_RING_HEADER_SIZE;
  return (struct sobas_ring_record *)(base + (n & (m->capacity - 1)) * (uint64_t)SOBAS_RING_RECORD_SIZE);
}

static uint64_t *payload(struct sobas_ring_record *r) { return (uint64_t *)((char *)r + SOBAS_RING_PAYLOAD_OFFSET); }

uint64_t sobas_ring_check(const struct sobas_ring_record *r, uint64_t n) {
  const uint64_t *w = (const uint64_t *)((const char *)r + SOBAS_RING_PAYLOAD_OFFSET);
  uint64_t x = (n + 1) * 0x9e3779b97f4a7c15ull;
  for (unsigned i = 0; i < WORDS; i++) {
    x ^= w[i];
    x = ((x << 27) | (x >> 37)) * 0xff51afd7ed558ccdull;
  }
  return x ^ (x >> 33);
}

void sobas_ring_write(const struct sobas_ring_map *m, struct sobas_ring_record *r) {
  struct sobas_ring_header *h = m->h;
  uint64_t n = __atomic_fetch_add(&h->ticket, 1, __ATOMIC_RELAXED);
  struct sobas_ring_record *slot = slot_of(m, n);
  uint64_t mine = 2 * n + 1, cur = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
  for (;;) {
    if (cur >= mine) { /* a writer a lap ahead of us already has the slot: we are hopelessly late */
      __atomic_fetch_add(&h->dropped, 1, __ATOMIC_RELAXED);
      return;
    }
    int stealing = 0;
    if (cur & 1) {
      /* Record (cur-1)/2 is being written. Its writer may just be slow: give ours up, unless it is two
       * laps behind us (killed mid-write, or stopped): then the slot is ours, and the check below keeps
       * what it may still scribble from ever being accepted. */
      if (n - (cur - 1) / 2 < 2 * (uint64_t)m->capacity) {
        __atomic_fetch_add(&h->dropped, 1, __ATOMIC_RELAXED);
        return;
      }
      stealing = 1;
    }
    /* Claim: seq odd. Relaxed is enough for the CAS itself; the fence below orders it before the
     * payload (pairs with the reader's acquire fence before its second seq load). */
    if (__atomic_compare_exchange_n(&slot->seq, &cur, mine, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      if (stealing) __atomic_fetch_add(&h->stolen, 1, __ATOMIC_RELAXED);
      break;
    }
  }
  __atomic_thread_fence(__ATOMIC_RELEASE); /* seq = odd is visible before any payload word */
  uint64_t *dst = payload(slot);
  const uint64_t *src = payload(r);
  /* Relaxed atomic word stores: a reader may copy concurrently, and the seqlock decides afterwards. */
  for (unsigned i = 0; i < WORDS; i++) __atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
  __atomic_store_n(&slot->check, sobas_ring_check(r, n), __ATOMIC_RELAXED);
  /* Publish: release orders the payload and check before seq = even (pairs with the reader's acquire
   * load of seq). A CAS, not a store: if a thief took the slot meanwhile, its odd seq must stay. */
  uint64_t expect = mine;
  __atomic_compare_exchange_n(&slot->seq, &expect, mine + 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

void sobas_ring_cursor_oldest(const struct sobas_ring_map *m, struct sobas_ring_cursor *c) {
  uint64_t t = __atomic_load_n(&m->h->ticket, __ATOMIC_ACQUIRE);
  memset(c, 0, sizeof *c);
  c->next = t > m->capacity ? t - m->capacity : 0;
}

int sobas_ring_read(const struct sobas_ring_map *m, struct sobas_ring_cursor *c, struct sobas_ring_record *out,
                    int64_t now_ns) {
  for (;;) {
    uint64_t t = __atomic_load_n(&m->h->ticket, __ATOMIC_ACQUIRE);
    if (c->next >= t) return 0;
    if (t - c->next > m->capacity) { /* overrun: the oldest records were overwritten unread */
      c->lost += t - c->next - m->capacity;
      c->next = t - m->capacity;
      c->pending_since = 0;
    }
    const struct sobas_ring_record *slot = slot_of(m, c->next);
    uint64_t want = 2 * c->next + 2;
    /* Acquire: pairs with the writer's release CAS; the payload read below is the published one. */
    uint64_t s1 = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
    if (s1 == want) {
      out->seq = s1;
      out->check = __atomic_load_n(&slot->check, __ATOMIC_RELAXED);
      const uint64_t *src = payload((struct sobas_ring_record *)slot);
      uint64_t *dst = payload(out);
      for (unsigned i = 0; i < WORDS; i++) dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
      memset((char *)out + SOBAS_RING_PAYLOAD_END, 0, SOBAS_RING_RECORD_SIZE - SOBAS_RING_PAYLOAD_END);
      /* Acquire fence: the copy completes before seq is read again (pairs with the writer's release
       * fence after its claim: a copy that overlapped a new writer sees seq changed). */
      __atomic_thread_fence(__ATOMIC_ACQUIRE);
      uint64_t s2 = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
      uint64_t n = c->next++;
      c->pending_since = 0;
      if (s2 != s1 || out->check != sobas_ring_check(out, n)) {
        c->torn++;
        continue;
      }
      return 1;
    }
    if (s1 > want) { /* a later lap has the slot */
      c->lost++;
      c->next++;
      c->pending_since = 0;
      continue;
    }
    /* Not complete: being written, or its writer has its ticket but has not claimed the slot yet. */
    if (c->pending_since == 0) c->pending_since = now_ns ? now_ns : 1;
    if (now_ns - c->pending_since < SOBAS_RING_STALE_NS) return 0;
    c->lost++; /* its writer died mid-write, or gave the record up */
    c->next++;
    c->pending_since = 0;
  }
}

const char *sobas_ring_validate(struct sobas_ring_header *h, size_t size, struct sobas_ring_map *m) {
  if (size < SOBAS_RING_HEADER_SIZE) return "shorter than its header";
  if (h->magic != SOBAS_RING_MAGIC) return "not a sobas ring (bad magic)";
  if (h->abi_major != SOBAS_RING_ABI_MAJOR) return "a ring of another ABI major version";
  if (h->header_size != SOBAS_RING_HEADER_SIZE || h->record_size != SOBAS_RING_RECORD_SIZE)
    return "header or record size differs from this build's";
  uint32_t cap = __atomic_load_n(&h->capacity, __ATOMIC_RELAXED); /* read once: the value checked is the one used */
  if (cap == 0 || (cap & (cap - 1)) || cap > (1u << 24)) return "capacity is not a power of two up to 2^24";
  if (size != SOBAS_RING_HEADER_SIZE + (size_t)cap * SOBAS_RING_RECORD_SIZE) return "file size does not match its capacity";
  m->h = h;
  m->capacity = cap;
  return NULL;
}

void sobas_ring_init(struct sobas_ring_header *h, uint32_t uid, int64_t now_ns) {
  memset(h, 0, sizeof *h);
  h->magic = SOBAS_RING_MAGIC;
  h->abi_major = SOBAS_RING_ABI_MAJOR;
  h->abi_minor = SOBAS_RING_ABI_MINOR;
  h->header_size = SOBAS_RING_HEADER_SIZE;
  h->record_size = SOBAS_RING_RECORD_SIZE;
  h->capacity = SOBAS_RING_CAPACITY;
  h->created_ns = now_ns;
  h->owner_uid = uid;
}

size_t sobas_ring_bytes(void) { return SOBAS_RING_HEADER_SIZE + (size_t)SOBAS_RING_CAPACITY * SOBAS_RING_RECORD_SIZE; }

uint64_t sobas_ring_board_path(uint16_t family, const uint8_t addr[16]) {
  uint64_t x = 0xcbf29ce484222325ull ^ family; /* FNV-1a */
  for (int i = 0; i < 16; i++) x = (x ^ addr[i]) * 0x100000001b3ull;
  return x ? x : 1;
}

/* A slot whose flow was not seen for SOBAS_RING_BOARD_FRESH_NS is free: its flow closed without leaving
 * (killed) or stopped being steered. */
static int board_stale(const struct sobas_ring_board_slot *b, int64_t now_ns) {
  return now_ns - __atomic_load_n(&b->seen_ns, __ATOMIC_RELAXED) > SOBAS_RING_BOARD_FRESH_NS;
}

/* The flow's slot: the one it had if it still holds it, else a free or stale one taken with a CAS (a
 * slot two flows race for goes to one; the other takes another at its next report). -1: board full. */
static int board_claim(struct sobas_ring_header *h, uint64_t owner, uint32_t hint, int64_t now_ns) {
  struct sobas_ring_board_slot *b = h->board;
  if (hint >= 1 && hint <= SOBAS_RING_BOARD_SLOTS && __atomic_load_n(&b[hint - 1].owner, __ATOMIC_RELAXED) == owner)
    return (int)hint - 1;
  for (int i = 0; i < SOBAS_RING_BOARD_SLOTS; i++) {
    uint64_t cur = __atomic_load_n(&b[i].owner, __ATOMIC_RELAXED);
    if (cur != 0 && !board_stale(&b[i], now_ns)) continue;
    /* Seen at once: a claimant that read it stale just before may still take it from us, and this flow
     * takes another slot at its next report. */
    if (__atomic_compare_exchange_n(&b[i].owner, &cur, owner, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      __atomic_store_n(&b[i].seen_ns, now_ns, __ATOMIC_RELAXED);
      return i;
    }
  }
  return -1;
}

uint32_t sobas_ring_board_report(struct sobas_ring_header *h, uint64_t owner, uint64_t path, uint32_t searching,
                                 int64_t now_ns, uint32_t *slot, uint32_t *siblings_searching) {
  struct sobas_ring_board_slot *b = h->board;
  int mine = board_claim(h, owner, *slot, now_ns);
  *slot = (uint32_t)(mine + 1);
  if (mine >= 0) {
    __atomic_store_n(&b[mine].path, path, __ATOMIC_RELAXED);
    __atomic_store_n(&b[mine].searching, searching, __ATOMIC_RELAXED);
    __atomic_store_n(&b[mine].seen_ns, now_ns, __ATOMIC_RELAXED);
  }
  uint32_t n = 0, s = 0;
  for (int i = 0; i < SOBAS_RING_BOARD_SLOTS; i++) {
    uint64_t o = __atomic_load_n(&b[i].owner, __ATOMIC_RELAXED);
    if (o == 0 || o == owner || __atomic_load_n(&b[i].path, __ATOMIC_RELAXED) != path ||
        board_stale(&b[i], now_ns))
      continue;
    n++;
    s += __atomic_load_n(&b[i].searching, __ATOMIC_RELAXED) != 0;
  }
  *siblings_searching = s;
  return n;
}

void sobas_ring_board_leave(struct sobas_ring_header *h, uint64_t owner, uint32_t slot) {
  if (slot < 1 || slot > SOBAS_RING_BOARD_SLOTS) return;
  uint64_t cur = owner;
  __atomic_compare_exchange_n(&h->board[slot - 1].owner, &cur, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
