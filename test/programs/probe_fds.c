/* probe_fds.c — downloads over HTTP while poking at the probe helper's hidden sockets (close, dup2 onto, closefrom), then seals itself with a TSYNC seccomp filter that would kill the helper. */
#include <dirent.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "common.h"

/* The UDP sockets this process did not open itself: the shim's. Returns how many, the first in *fd. */
static int shim_udp(int *fd) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  if (!d) DIE("opendir: %s", strerror(errno));
  for (struct dirent *e; (e = readdir(d));) {
    int f = atoi(e->d_name), type = 0;
    socklen_t len = sizeof type;
    if (f <= 2 || f == dirfd(d)) continue;
    if (getsockopt(f, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_DGRAM) {
      if (n++ == 0) *fd = f;
    }
  }
  closedir(d);
  return n;
}

/* Kills the process on any syscall the probe helper makes and a plain reader does not. */
static void seal(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sendto, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_recvmsg, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ppoll, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) DIE("no_new_privs: %s", strerror(errno));
  /* TSYNC: every thread of the process gets the filter, the shim's helper included if it still ran. */
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
    DIE("seccomp: %s", strerror(errno));
}

int main(int argc, char **argv) {
  if (argc != 4) DIE("usage: probe_fds HOST PORT PATH");
  int s = http_get(argv[1], argv[2], argv[3]);

  /* Read until the shim's probe socket exists (it opens after 64 KB). */
  uint64_t got = 0;
  int probe = -1, tries = 0;
  while (shim_udp(&probe) == 0 && tries++ < 400) got += read_upto(s, 16384);
  if (probe < 0) DIE("no probe socket appeared after %llu bytes", (unsigned long long)got);
  int fl = fcntl(probe, F_GETFD);
  printf("probe socket at fd %d, close-on-exec %s\n", probe, (fl & FD_CLOEXEC) ? "yes" : "no");
  if (probe < 64 || !(fl & FD_CLOEXEC)) DIE("the probe socket must be high and close-on-exec");

  errno = 0;
  if (close(probe) != -1 || errno != EBADF) DIE("close(probe fd) must be EBADF to the host");
  if (fcntl(probe, F_GETFD) < 0) DIE("close(probe fd) closed the shim's socket");
  printf("ok close is EBADF\n");

  if (dup2(s, probe) != probe) DIE("dup2 onto the probe's number: %s", strerror(errno));
  int type = 0;
  socklen_t len = sizeof type;
  getsockopt(probe, SOL_SOCKET, SO_TYPE, &type, &len);
  int moved = -1;
  if (type != SOCK_STREAM || shim_udp(&moved) != 1 || moved == probe) DIE("dup2 did not get the number cleanly");
  printf("ok dup2 took fd %d, the probe moved to %d\n", probe, moved);
  if (close(probe) != 0) DIE("closing our own dup: %s", strerror(errno));

  int junk = open("/dev/null", O_RDONLY);
  closefrom(s + 1);
  if (fcntl(junk, F_GETFD) >= 0) DIE("closefrom left the host's own fd open");
  int after = -1;
  if (shim_udp(&after) != 1 || after != moved) DIE("closefrom closed the shim's socket");
  if (close_range((unsigned)s + 1, ~0u, 0) != 0 || shim_udp(&after) != 1) DIE("close_range closed the shim's socket");
  printf("ok closefrom and close_range went around it\n");

  got += read_upto(s, 4u << 20); /* let the probe run on its moved socket */
  seal();
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL); /* the helper, had it survived, would have probed (sendto) by now */
  got += read_upto(s, ~0ull);
  printf("ok sealed and alive, bytes=%llu\n", (unsigned long long)got);
  return 0;
}
