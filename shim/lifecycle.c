/* lifecycle.c — the process side of the shim: constructor, configuration loading, fork, seccomp, exec. */
#include <dlfcn.h>
#include <errno.h> /* program_invocation_short_name */
#include <fcntl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lifecycle.h"
#include "log.h"
#include "probe.h"
#include "real.h"
#include "track.h"

/* Configuration warnings are collected during start-up and said once per process tree: a bad value
 * under `sobas make` must not print once per compiler. The first process that reports a set of
 * problems marks it in SOBAS_CONFIG_WARNED (a hash of the text); descendants with the same problems
 * stay quiet. */
struct warnings {
  char text[4096];
  size_t len;
};
static struct warnings startup_warnings; /* constructor-only, single-threaded */

static void warn_collect(void *ctx, const char *line) {
  struct warnings *w = ctx;
  int n = snprintf(w->text + w->len, sizeof w->text - w->len, "%s\n", line);
  if (n > 0) w->len = w->len + (size_t)n < sizeof w->text ? w->len + (size_t)n : sizeof w->text - 1;
}

static void flush_warnings(struct warnings *w) {
  if (w->len == 0) return;
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < w->len; i++) h = (h ^ (unsigned char)w->text[i]) * 16777619u;
  char mark[16];
  snprintf(mark, sizeof mark, "%08x", h);
  const char *seen = secure_getenv("SOBAS_CONFIG_WARNED");
  if (seen && strcmp(seen, mark) == 0) return;
  (void)!libc_write(2, w->text, w->len);
  setenv("SOBAS_CONFIG_WARNED", mark, 1);
}

/* Reads at most 64 KiB of a config file into buf; returns -1 when it does not exist or cannot be read. */
static int read_small_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = 0;
  ssize_t r;
  while (n + 1 < cap && (r = libc_read(fd, buf + n, cap - 1 - n)) > 0) n += (size_t)r;
  libc_close(fd);
  buf[n] = '\0';
  return 0;
}

/* The first config file that exists: $SOBAS_CONF_FILE, ~/.config/sobas/sobas.conf, /etc/sobas/sobas.conf. */
static void load_config_file(struct sobas_config *c) {
  static char text[64 * 1024]; /* constructor-only, single-threaded */
  char path[PATH_MAX];
  const char *explicit_path = secure_getenv("SOBAS_CONF_FILE");
  if (explicit_path) {
    if (read_small_file(explicit_path, text, sizeof text) == 0) {
      sobas_config_parse_text(c, text, explicit_path, warn_collect, &startup_warnings);
    } else {
      char line[PATH_MAX + 96];
      snprintf(line, sizeof line, "sobas: SOBAS_CONF_FILE=\"%s\" cannot be read; using the defaults", explicit_path);
      warn_collect(&startup_warnings, line);
    }
    return;
  }
  const char *home = secure_getenv("HOME");
  if (home && snprintf(path, sizeof path, "%s/.config/sobas/sobas.conf", home) < (int)sizeof path &&
      read_small_file(path, text, sizeof text) == 0) {
    sobas_config_parse_text(c, text, path, warn_collect, &startup_warnings);
    return;
  }
  if (read_small_file("/etc/sobas/sobas.conf", text, sizeof text) == 0)
    sobas_config_parse_text(c, text, "/etc/sobas/sobas.conf", warn_collect, &startup_warnings);
}

static void atfork_child(void) { sobas_track_fork_child(); }

/* SOBAS_VERBOSE (sobas -v): one line per process on its stderr, whether the shim steers it or why it
 * passes everything through. Off by default: the host's stderr is the host's. */
static void say(int verbose, const char *what) {
  if (!verbose) return;
  char line[320];
  int n = snprintf(line, sizeof line, "sobas: %s[%d]: %s\n", program_invocation_short_name, (int)getpid(), what);
  if (n > 0) (void)!libc_write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

__attribute__((constructor)) static void sobas_init(void) {
  sobas_real_resolve();
  struct sobas_config *c = &sobas_proc.cfg;
  sobas_config_default(c);
  /* SOBAS_DISABLE first: a disabled shim reads no file and says nothing. */
  const char *off = secure_getenv("SOBAS_DISABLE"), *verbose = secure_getenv("SOBAS_VERBOSE");
  int disabled = 0, loud = 0;
  if (off && sobas_parse_bool(off, &disabled) == 0 && disabled) {
    say(verbose && sobas_parse_bool(verbose, &loud) == 0 && loud, "passing through: SOBAS_DISABLE");
    return;
  }
  load_config_file(c);
  sobas_config_apply_env(c, secure_getenv, warn_collect, &startup_warnings);
  flush_warnings(&startup_warnings);
  if (c->disable) {
    say(c->verbose, "passing through: disable in the config");
    return;
  }
  /* A process started inside a seccomp sandbox may be killed by any syscall its filter did not expect. */
  if (libc_prctl(PR_GET_SECCOMP, 0, 0, 0, 0) > 0) {
    say(c->verbose, "passing through: started inside a seccomp sandbox");
    return;
  }
  char active[200];
  snprintf(active, sizeof active, "active: policy %s, senders %s, probe %s", sobas_policy_name((enum sobas_policy)c->policy),
           c->policy == SOBAS_POLICY_SOBAS && c->sender ? "paced" : "measured", c->probe ? "on" : "off");
  say(c->verbose, active);

  Dl_info info;
  if (dladdr((void *)sobas_init, &info) && info.dli_fname && strlen(info.dli_fname) < sizeof sobas_proc.self_path)
    strcpy(sobas_proc.self_path, info.dli_fname);
  sobas_proc.pid = getpid();
  sobas_proc.uid = (uint32_t)getuid();
  pthread_atfork(NULL, NULL, atfork_child);
  __atomic_store_n(&sobas_proc.active, 1, __ATOMIC_RELEASE);
}

/* exit() closes no sockets through us: programs like wget just end. _exit and signals skip this. */
__attribute__((destructor)) static void sobas_fini(void) { sobas_track_exit(); }

/* A filter is about to be installed: the probe helper makes its last syscall before it goes in (a
 * filter with TSYNC would cover the helper's thread too), then everything goes quiet. */
static void before_seccomp(void) {
  sobas_probe_stop(1);
  sobas_track_quiet();
}

void sobas_note_prctl(int op, unsigned long arg) {
  if (op == PR_SET_SECCOMP && arg != SECCOMP_MODE_DISABLED) before_seccomp();
}

void sobas_note_syscall(long nr, long op) {
  if (nr == __NR_seccomp && (op == SECCOMP_SET_MODE_STRICT || op == SECCOMP_SET_MODE_FILTER)) before_seccomp();
}

const char *sobas_self_path(void) { return sobas_proc.self_path[0] ? sobas_proc.self_path : NULL; }
