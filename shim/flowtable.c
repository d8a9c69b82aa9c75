/* flowtable.c — the fd slot map and the flow record pool (lock-free; memory is mapped, never freed while live). */
#include "flowtable.h"

#include <string.h>
#include <sys/mman.h>

#include "hb.h"

/* mmap, not malloc: the shim must not touch the host's heap (its allocator may be wrapped or mid-fork),
 * and untouched pages of a chunk cost nothing. */
static void *map_zeroed(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Publishes a freshly mapped chunk; if another thread won the race, ours is unmapped and theirs used. */
static void *chunk_get_or_map(void **slot, size_t bytes) {
  void *c = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (c) {
    SOBAS_HB_AFTER(slot);
    return c;
  }
  void *fresh = map_zeroed(bytes);
  if (!fresh) return NULL;
  void *expected = NULL;
  SOBAS_HB_BEFORE(slot);
  /* release: the zeroed chunk is visible before the pointer; pairs with the acquire loads above and in
   * sobas_ft_get and in the pool scans. */
  if (__atomic_compare_exchange_n(slot, &expected, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return fresh;
  munmap(fresh, bytes);
  return expected;
}

static sobas_slot *slot_ptr(struct sobas_flowtable *t, int fd) {
  if ((unsigned)fd >= SOBAS_FD_LIMIT) return NULL;
  sobas_slot *c = chunk_get_or_map((void **)&t->fd_chunks[(unsigned)fd >> SOBAS_FD_CHUNK_BITS],
                                   SOBAS_FD_CHUNK * sizeof(sobas_slot));
  return c ? &c[(unsigned)fd & (SOBAS_FD_CHUNK - 1)] : NULL;
}

sobas_slot sobas_ft_swap(struct sobas_flowtable *t, int fd, sobas_slot s) {
  if (s == 0 && sobas_ft_get(t, fd) == 0) return 0; /* storing UNKNOWN over UNKNOWN maps nothing */
  sobas_slot *p = slot_ptr(t, fd);
  if (!p) return 0;
  SOBAS_HB_BEFORE(p);
  sobas_slot old = __atomic_exchange_n(p, s, __ATOMIC_ACQ_REL);
  SOBAS_HB_AFTER(p);
  return old;
}

int sobas_ft_cas(struct sobas_flowtable *t, int fd, sobas_slot expected, sobas_slot desired) {
  sobas_slot *p = slot_ptr(t, fd);
  if (!p) return 0;
  SOBAS_HB_BEFORE(p);
  if (!__atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 0;
  SOBAS_HB_AFTER(p);
  return 1;
}

struct sobas_flow *sobas_ft_flow_alloc(struct sobas_flowtable *t) {
  for (uint32_t c = 0; c < SOBAS_FLOW_CHUNKS; c++) {
    struct sobas_flow *chunk =
        chunk_get_or_map((void **)&t->flow_chunks[c], SOBAS_FLOW_CHUNK * sizeof(struct sobas_flow));
    if (!chunk) return NULL;
    for (uint32_t i = 0; i < SOBAS_FLOW_CHUNK; i++) {
      struct sobas_flow *f = &chunk[i];
      uint32_t expected = 0;
      if (__atomic_load_n(&f->used, __ATOMIC_RELAXED) ||
          !__atomic_compare_exchange_n(&f->used, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        continue;
      SOBAS_HB_AFTER(&f->used);
      memset((char *)f + sizeof f->used, 0, sizeof *f - sizeof f->used);
      SOBAS_HB_ATOMIC(&f->used);
      SOBAS_HB_ATOMIC(&f->next_check);
      SOBAS_HB_ATOMIC(&f->app);
      f->refs = 1;
      f->id = __atomic_add_fetch(&t->next_id, 1, __ATOMIC_RELAXED);
      return f;
    }
  }
  return NULL;
}

void sobas_ft_flow_free(struct sobas_flowtable *t, struct sobas_flow *f) {
  (void)t;
  /* release: a later allocator's acquire CAS sees every write we made to the record */
  SOBAS_HB_BEFORE(&f->used);
  __atomic_store_n(&f->used, 0, __ATOMIC_RELEASE);
}

struct sobas_flow *sobas_ft_find_inode(struct sobas_flowtable *t, uint64_t inode) {
  if (inode == 0) return NULL;
  for (uint32_t c = 0; c < SOBAS_FLOW_CHUNKS; c++) {
    struct sobas_flow *chunk = __atomic_load_n(&t->flow_chunks[c], __ATOMIC_ACQUIRE);
    if (!chunk) return NULL; /* chunks are mapped in order */
    for (uint32_t i = 0; i < SOBAS_FLOW_CHUNK; i++) {
      struct sobas_flow *f = &chunk[i];
      if (__atomic_load_n(&f->used, __ATOMIC_ACQUIRE) && f->inode == inode) {
        __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
        return f;
      }
    }
  }
  return NULL;
}

sobas_slot sobas_ft_flow_slot(struct sobas_flow *f, unsigned flags) {
  __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
  return SOBAS_SLOT(SOBAS_FD_FLOW, flags, f);
}

void sobas_ft_take_range(struct sobas_flowtable *t, unsigned lo, unsigned hi,
                         void (*fn)(void *ctx, int fd, sobas_slot old), void *ctx) {
  if (hi >= SOBAS_FD_LIMIT) hi = SOBAS_FD_LIMIT - 1;
  for (unsigned fd = lo; fd <= hi && fd >= lo;) {
    sobas_slot *c = __atomic_load_n(&t->fd_chunks[fd >> SOBAS_FD_CHUNK_BITS], __ATOMIC_ACQUIRE);
    unsigned chunk_end = (fd | (SOBAS_FD_CHUNK - 1));
    if (chunk_end > hi) chunk_end = hi;
    if (c) {
      for (unsigned i = fd; i <= chunk_end; i++) {
        sobas_slot *p = &c[i & (SOBAS_FD_CHUNK - 1)];
        if (__atomic_load_n(p, __ATOMIC_RELAXED) == 0) continue;
        sobas_slot old = __atomic_exchange_n(p, 0, __ATOMIC_ACQ_REL);
        if (old) fn(ctx, (int)i, old);
      }
    }
    if (chunk_end == hi) break;
    fd = chunk_end + 1;
  }
}

void sobas_ft_destroy(struct sobas_flowtable *t) {
  for (unsigned i = 0; i < SOBAS_FD_CHUNKS; i++)
    if (t->fd_chunks[i]) munmap(t->fd_chunks[i], SOBAS_FD_CHUNK * sizeof(sobas_slot));
  for (unsigned i = 0; i < SOBAS_FLOW_CHUNKS; i++)
    if (t->flow_chunks[i]) munmap(t->flow_chunks[i], SOBAS_FLOW_CHUNK * sizeof(struct sobas_flow));
  memset(t, 0, sizeof *t);
}
