/* config.h — the shim's settings: defaults, SOBAS_* environment variables and sobas.conf, parsed without side effects. */
#ifndef SOBAS_CONFIG_H
#define SOBAS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "measure.h"
#include "sobas/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SOBAS_PATH_MAX 512

struct sobas_config {
  int disable;                    /* SOBAS_DISABLE: pure pass-through */
  int verbose;                    /* SOBAS_VERBOSE: one line per process on stderr: steered, or why not */
  char log_path[SOBAS_PATH_MAX];  /* SOBAS_LOG: per-flow measurement log, "" = off */
  uint64_t bulk_bytes;            /* SOBAS_BULK_BYTES: bytes moved before a flow is measured */
  int track_loopback;             /* SOBAS_TRACK_LOOPBACK: measure flows to 127/8 and ::1 too */
  struct sobas_meas_params meas;  /* SOBAS_MIN_WINDOW_MS, SOBAS_MAX_WINDOW_MS */
  int policy;                     /* SOBAS_POLICY: enum sobas_policy (sobas, off, bdp, drs, fixed:BYTES) */
  uint64_t policy_bytes;          /* fixed:BYTES: the S it holds */
  uint64_t bdp_bytes;             /* SOBAS_BDP_BYTES: policy bdp's S as the user knows it (0: C'·T from the probe) */
  int sender;                     /* SOBAS_SENDER: steer sending flows too, by pacing them (policy sobas) */
  uint32_t reeval_ms;             /* SOBAS_REEVAL_MS: re-run the search this long after a decision; 0 = never */
  int probe;                      /* SOBAS_PROBE: run the UDP side probe against the peer's sobasd */
  uint32_t probe_port;            /* SOBAS_PROBE_PORT: sobasd's UDP port on the peer */
  char ring[SOBAS_PATH_MAX];      /* SOBAS_RING: the decision ring, a name in /dev/shm or an absolute path;
                                     "" = /dev/shm/sobas-UID.ring, "off" = none */
};


/* Receives one complete diagnostic line (no trailing newline). */
typedef void (*sobas_warn_fn)(void *ctx, const char *line);

void sobas_config_default(struct sobas_config *c);

/* Sets one key. `key` is the environment name (SOBAS_BULK_BYTES) or the file name (bulk_bytes).
 * Returns 0 when set; on a bad value warns once, naming the key and the default kept, and returns -1;
 * returns -2 for a key that is not ours (the caller decides whether that deserves a warning). */
int sobas_config_set(struct sobas_config *c, const char *key, const char *value, sobas_warn_fn warn, void *ctx);

/* Parses sobas.conf text: `key = value` lines, `#` comments, blank lines. `source` names the file in warnings. */
void sobas_config_parse_text(struct sobas_config *c, const char *text, const char *source, sobas_warn_fn warn,
                             void *ctx);

/* Applies every SOBAS_* variable from `getenv_fn` (secure_getenv in the shim). */
void sobas_config_apply_env(struct sobas_config *c, char *(*getenv_fn)(const char *), sobas_warn_fn warn,
                            void *ctx);

/* The i-th key's sobas.conf name, NULL past the last: lets tests check that the manual and the
 * shipped sobas.conf name every key. */
const char *sobas_config_file_key(size_t i);

/* Parses "64K", "1M", "2G" (powers of 1024) or plain bytes. Returns 0 on success. */
int sobas_parse_size(const char *s, uint64_t *out);
/* Parses 1/0, yes/no, true/false, on/off. Returns 0 on success. */
int sobas_parse_bool(const char *s, int *out);

#ifdef __cplusplus
}
#endif
#endif
