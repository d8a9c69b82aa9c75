/* peer_steers.c — a preloaded sender asks sobasd's steered-flows table whether a sobas receiver probes its flow (sobas/steered.h), and tells sobasd that it steers it (LEAD). */
#include "peer_steers.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "probe.h"
#include "real.h"
#include "sobas/steered.h"

/* sobasd under its systemd unit has a private /dev/shm and publishes in its runtime directory;
 * started by hand it publishes in /dev/shm. */
static const char run_dir[] = "/run/sobasd";
static const char *const dirs[] = {run_dir, SOBAS_STEERED_DIR};

/* One mapping per process, read-only, no fd kept. Looked for again at most once a second while there is
 * none, or while a miss might mean sobasd was restarted (a new file, another inode). */
static struct {
  const struct sobas_steered_table *t; /* published with a release store once valid */
  uint64_t ino;
  int64_t next_look_ns;
  int busy;
} S;

/* Whether a file's owner can be trusted not to shrink it: reading a page past a shrunk file's end kills
 * the host with SIGBUS, and only the owner (or root) may truncate a file no one else may write. Root, this
 * process's own user (who may kill it anyway), or under systemd the dynamic user that owns /run/sobasd,
 * a directory only root can make in /run. */
static int trusted_owner(const struct stat *st, const char *dir) {
  if (st->st_uid == 0 || st->st_uid == geteuid()) return 1;
  struct stat d, run;
  return dir == run_dir && stat(dir, &d) == 0 && S_ISDIR(d.st_mode) && d.st_uid == st->st_uid &&
         !(d.st_mode & (S_IWGRP | S_IWOTH)) && stat("/run", &run) == 0 && run.st_uid == 0 &&
         !(run.st_mode & (S_IWGRP | S_IWOTH));
}

static const struct sobas_steered_table *map_table(const char *dir, const char *path, uint64_t *ino) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  void *m = MAP_FAILED;
  /* Only sobasd's: a regular file of the table's size, one link, that no one but a trusted owner may write. */
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
      (size_t)st.st_size == sizeof(struct sobas_steered_table) && !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
      trusted_owner(&st, dir))
    m = mmap(NULL, sizeof(struct sobas_steered_table), PROT_READ, MAP_SHARED, fd, 0);
  libc_close(fd);
  if (m == MAP_FAILED) return NULL;
  if (!sobas_steered_valid(m)) {
    munmap(m, sizeof(struct sobas_steered_table));
    return NULL;
  }
  *ino = (uint64_t)st.st_ino;
  return m;
}

/* (Re)maps the table when due; never blocks: a thread that finds another looking goes on with what is mapped. */
static void look(int64_t now_ns) {
  if (now_ns < __atomic_load_n(&S.next_look_ns, __ATOMIC_RELAXED) || __atomic_exchange_n(&S.busy, 1, __ATOMIC_ACQUIRE))
    return;
  __atomic_store_n(&S.next_look_ns, now_ns + 1000000000LL, __ATOMIC_RELAXED); /* read unlocked above */
  int saved = errno;
  struct stat ns, st;
  if (stat("/proc/self/ns/net", &ns) == 0) {
    for (unsigned i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
      char path[128];
      snprintf(path, sizeof path, "%s/%s%llu", dirs[i], SOBAS_STEERED_PREFIX, (unsigned long long)ns.st_ino);
      if (stat(path, &st) != 0) continue;
      if (S.t && (uint64_t)st.st_ino == S.ino) break; /* the one mapped */
      uint64_t ino;
      const struct sobas_steered_table *t = map_table(dirs[i], path, &ino);
      if (!t) continue;
      /* The old mapping stays: another thread may be reading it (a few pages, once per sobasd restart). */
      S.ino = ino;
      __atomic_store_n(&S.t, t, __ATOMIC_RELEASE);
      break;
    }
  }
  errno = saved;
  __atomic_store_n(&S.busy, 0, __ATOMIC_RELEASE);
}

int sobas_peer_steers(const struct sobas_addr *local, const struct sobas_addr *peer, int64_t now_ns) {
  struct sobas_probe_flow fl;
  if (sobas_probe_flow_of(peer, local, &fl) != 0) return 0;
  const struct sobas_steered_table *t = __atomic_load_n(&S.t, __ATOMIC_ACQUIRE);
  if (t && sobas_steered_has(t, &fl, now_ns)) return 1;
  look(now_ns);
  t = __atomic_load_n(&S.t, __ATOMIC_ACQUIRE);
  return t && sobas_steered_has(t, &fl, now_ns);
}

int sobas_peer_sobasd_here(int64_t now_ns) {
  look(now_ns);
  return __atomic_load_n(&S.t, __ATOMIC_ACQUIRE) != NULL;
}

/* One datagram on a socket opened for it: a LEAD goes once per flow, again only while its receiver still
 * probes (track.c), so a kept socket, which the host's close and dup2 would have to step around, is not
 * worth its fd. Close-on-exec for the microseconds it lives. */
int sobas_peer_lead(const struct sobas_addr *local, const struct sobas_addr *peer) {
  struct sobas_probe_msg m = {.type = SOBAS_MSG_LEAD};
  uint8_t buf[SOBAS_PROBE_LEN];
  if (sobas_probe_flow_of(peer, local, &m.flow) != 0 || sobas_probe_encode(&m, buf, sizeof buf) != sizeof buf)
    return -1;
  int saved = errno;
  ssize_t n = -1;
  int fd = libc_socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd >= 0) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path + 1, SOBAS_LEAD_SOCKET, sizeof SOBAS_LEAD_SOCKET - 1); /* abstract: a leading NUL */
    n = libc_sendto(fd, buf, sizeof buf, 0, (const struct sockaddr *)&a,
                    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof SOBAS_LEAD_SOCKET));
    libc_close(fd);
  }
  errno = saved;
  return n == (ssize_t)sizeof buf ? 0 : -1;
}

void sobas_peer_steers_fork_child(void) { S.busy = 0; }
