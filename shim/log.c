/* log.c — the append-only SOBAS_LOG file. */
#include "log.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "real.h"

void sobas_log_append(const char *path, const char *line, size_t len) {
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  (void)!libc_write(fd, line, len);
  libc_close(fd);
}

void sobas_fmt_addr(char *buf, size_t n, const struct sobas_addr *a) {
  char ip[INET6_ADDRSTRLEN];
  if (a->family == AF_INET && inet_ntop(AF_INET, a->addr, ip, sizeof ip))
    snprintf(buf, n, "%s:%u", ip, a->port);
  else if (a->family == AF_INET6 && inet_ntop(AF_INET6, a->addr, ip, sizeof ip))
    snprintf(buf, n, "[%s]:%u", ip, a->port);
  else
    snprintf(buf, n, "?");
}
