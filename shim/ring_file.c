/* ring_file.c — where the decision ring lives and how it is opened: one per user in /dev/shm, 0600, created atomically, checked before it is mapped (shim and sobas-top). */
#include "ring_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int sobas_ring_path(char *out, size_t n, const char *override, unsigned uid) {
  int r;
  if (override && override[0] == '/')
    r = snprintf(out, n, "%s", override);
  else if (override && override[0] && !strchr(override, '/'))
    r = snprintf(out, n, "/dev/shm/%s", override);
  else if (override && override[0])
    return -1; /* a relative path would follow each process's working directory */
  else
    r = snprintf(out, n, "/dev/shm/sobas-%u.ring", uid);
  return r > 0 && (size_t)r < n ? 0 : -1;
}

static void say(char *err, size_t n, const char *what, const char *path, int e) {
  if (err && n) snprintf(err, n, "%s %s%s%s", path, what, e ? ": " : "", e ? strerror(e) : "");
}

/* The checks an fd must pass before it is mapped: a regular file of `owner`'s, private, of the right size. */
static int check_fd(int fd, const char *path, unsigned owner, size_t *size, char *err, size_t n) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    say(err, n, "cannot be examined", path, errno);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    say(err, n, "is not a regular file", path, 0);
    return -1;
  }
  if (st.st_uid != owner) {
    say(err, n, "belongs to another user", path, 0);
    return -1;
  }
  if (st.st_mode & 077) {
    say(err, n, "is readable or writable by others (mode must be 0600)", path, 0);
    return -1;
  }
  if (st.st_size < SOBAS_RING_HEADER_SIZE || (uint64_t)st.st_size > ((uint64_t)1 << 33)) {
    say(err, n, "has an impossible size for a ring", path, 0);
    return -1;
  }
  *size = (size_t)st.st_size;
  return 0;
}

/* A writer stores into the mapping: a page the filesystem cannot back then (a full /dev/shm, a ring
 * made sparse) would kill the host with SIGBUS. Every block is reserved first, or the ring not used.
 * fallocate(2), not posix_fallocate: glibc's fallback for filesystems without it writes bytes into
 * the file, which other processes are writing records into. */
static int reserve(int fd, const char *path, size_t size, char *err, size_t n) {
  if (fallocate(fd, 0, 0, (off_t)size) == 0) return 0;
  say(err, n, "cannot be reserved", path, errno);
  return -1;
}

static int map_fd(int fd, const char *path, int writable, unsigned owner, struct sobas_ring_map *m, void **base,
                  size_t *size, uint64_t *ino, char *err, size_t n) {
  if (check_fd(fd, path, owner, size, err, n) != 0) return -1;
  if (writable && reserve(fd, path, *size, err, n) != 0) return -1;
  void *p = mmap(NULL, *size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    say(err, n, "cannot be mapped", path, errno);
    return -1;
  }
  const char *bad = sobas_ring_validate(p, *size, m);
  if (bad) {
    munmap(p, *size);
    if (err && n) snprintf(err, n, "%s is corrupt: %s", path, bad);
    return -1;
  }
  struct stat st;
  *ino = fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
  *base = p;
  return 0;
}

/* A new ring under a temporary name, complete before link() publishes it: nobody ever maps a
 * half-initialised header. Returns the fd of the published file, or -1 (EEXIST: someone else won). */
static int create(const char *path, char *err, size_t n) {
  char tmp[512];
  if (snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof tmp) return -1;
  int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    say(err, n, "cannot be created", tmp, errno);
    return -1;
  }
  size_t size = sobas_ring_bytes();
  void *p = MAP_FAILED;
  if (reserve(fd, tmp, size, err, n) == 0) {
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) say(err, n, "cannot be mapped", tmp, errno);
  }
  if (p == MAP_FAILED) {
    close(fd);
    unlink(tmp);
    return -1;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  sobas_ring_init(p, (uint32_t)geteuid(), (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
  munmap(p, size);
  int r = link(tmp, path);
  int e = errno;
  unlink(tmp);
  if (r != 0) {
    close(fd);
    if (e != EEXIST) say(err, n, "cannot be published", path, e);
    errno = e;
    return -1;
  }
  return fd;
}

static int open_ring(const char *path, int writer, unsigned owner, struct sobas_ring_map *m, void **base,
                     size_t *size, uint64_t *ino, char *err, size_t n) {
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = open(path, (writer ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && writer) {
      fd = create(path, err, n);
      if (fd < 0 && errno == EEXIST) continue; /* another process created it first: open theirs */
      if (fd < 0) return -1;
    }
    if (fd < 0) {
      say(err, n, errno == ELOOP ? "is a symbolic link (refused)" : "cannot be opened", path, errno == ELOOP ? 0 : errno);
      return -1;
    }
    /* Mapped, the ring needs no fd: a program that closes every fd cannot break it. */
    int r = map_fd(fd, path, writer, owner, m, base, size, ino, err, n);
    close(fd);
    return r;
  }
  say(err, n, "keeps appearing and disappearing", path, 0);
  return -1;
}

int sobas_ring_open(const char *path, int writer, struct sobas_ring_map *m, void **base, size_t *size, uint64_t *ino,
                    char *err, size_t n) {
  return open_ring(path, writer, (unsigned)geteuid(), m, base, size, ino, err, n);
}

int sobas_ring_open_of(const char *path, unsigned owner, struct sobas_ring_map *m, void **base, size_t *size,
                       uint64_t *ino, char *err, size_t n) {
  return open_ring(path, 0, owner, m, base, size, ino, err, n);
}
