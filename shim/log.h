/* log.h — the SOBAS_LOG measurement log: one line per flow event, appended by every process. */
#ifndef SOBAS_LOG_H
#define SOBAS_LOG_H

#include <stddef.h>

#include "flowtable.h"

/* Appends one line to the log at `path`. The file is opened, appended and closed each time: the shim
 * then owns no fd the host could close, dup over or inherit, and O_APPEND keeps lines from concurrent
 * processes whole. Failures (chroot, dropped privileges) are silent: logging is best effort. */
void sobas_log_append(const char *path, const char *line, size_t len);

/* "10.0.0.1:80" or "[fd00::1]:80"; "?" when unknown. */
void sobas_fmt_addr(char *buf, size_t n, const struct sobas_addr *a);

#endif
