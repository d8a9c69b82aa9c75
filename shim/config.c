/* config.c — parsing of the shim's settings (pure: callers supply the text, the environment and the warning sink). */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sobas/probe.h"

enum key_type { KEY_BOOL, KEY_SIZE, KEY_MS, KEY_PERIOD_MS, KEY_PATH, KEY_POLICY, KEY_PORT, KEY_RING };

struct key {
  const char *env;   /* SOBAS_BULK_BYTES */
  const char *file;  /* bulk_bytes */
  enum key_type type;
  size_t offset;
  const char *default_text;  /* quoted in warnings */
};

#define FIELD(f) offsetof(struct sobas_config, f)
static const struct key keys[] = {
    {"SOBAS_DISABLE", "disable", KEY_BOOL, FIELD(disable), "0"},
    {"SOBAS_VERBOSE", "verbose", KEY_BOOL, FIELD(verbose), "0"},
    {"SOBAS_LOG", "log", KEY_PATH, FIELD(log_path), "off"},
    {"SOBAS_BULK_BYTES", "bulk_bytes", KEY_SIZE, FIELD(bulk_bytes), "256K"},
    {"SOBAS_TRACK_LOOPBACK", "track_loopback", KEY_BOOL, FIELD(track_loopback), "0"},
    {"SOBAS_MIN_WINDOW_MS", "min_window_ms", KEY_MS, FIELD(meas.min_window_us), "10"},
    {"SOBAS_MAX_WINDOW_MS", "max_window_ms", KEY_MS, FIELD(meas.max_window_us), "2000"},
    {"SOBAS_POLICY", "policy", KEY_POLICY, FIELD(policy), "sobas"},
    {"SOBAS_BDP_BYTES", "bdp_bytes", KEY_SIZE, FIELD(bdp_bytes), "0 (C'·T from the probe)"},
    {"SOBAS_SENDER", "sender", KEY_BOOL, FIELD(sender), "1"},
    {"SOBAS_REEVAL_MS", "reeval_ms", KEY_PERIOD_MS, FIELD(reeval_ms), "0 (decide once)"},
    {"SOBAS_PROBE", "probe", KEY_BOOL, FIELD(probe), "1"},
    {"SOBAS_PROBE_PORT", "probe_port", KEY_PORT, FIELD(probe_port), "9521"},
    {"SOBAS_RING", "ring", KEY_RING, FIELD(ring), "/dev/shm/sobas-UID.ring"},
};

#undef FIELD

void sobas_config_default(struct sobas_config *c) {
  memset(c, 0, sizeof *c);
  c->bulk_bytes = 256 * 1024;
  c->probe = 1;
  c->sender = 1;
  c->probe_port = SOBAS_PROBE_DEFAULT_PORT;
  sobas_meas_params_default(&c->meas);
}

int sobas_parse_size(const char *s, uint64_t *out) {
  if (!s || !isdigit((unsigned char)*s)) return -1;
  uint64_t v = 0;
  for (; isdigit((unsigned char)*s); s++) {
    if (v > (UINT64_MAX - 9) / 10) return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  unsigned shift = 0;
  switch (*s) {
    case 'k': case 'K': shift = 10; s++; break;
    case 'm': case 'M': shift = 20; s++; break;
    case 'g': case 'G': shift = 30; s++; break;
    default: break;
  }
  if (*s != '\0') return -1;
  if (shift && v > (UINT64_MAX >> shift)) return -1;
  *out = v << shift;
  return 0;
}

int sobas_parse_bool(const char *s, int *out) {
  static const char *yes[] = {"1", "yes", "true", "on"};
  static const char *no[] = {"0", "no", "false", "off"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
    if (strcasecmp(s, yes[i]) == 0) { *out = 1; return 0; }
    if (strcasecmp(s, no[i]) == 0) { *out = 0; return 0; }
  }
  return -1;
}

static void warn_bad(const struct key *k, const char *value, const char *what, sobas_warn_fn warn, void *ctx) {
  if (!warn) return;
  char line[SOBAS_PATH_MAX + 160];
  snprintf(line, sizeof line, "sobas: %s=\"%.*s\" is not %s; using the default (%s)", k->env, SOBAS_PATH_MAX, value,
           what, k->default_text);
  warn(ctx, line);
}

static const struct key *find_key(const char *name) {
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (strcmp(name, keys[i].env) == 0 || strcasecmp(name, keys[i].file) == 0) return &keys[i];
  return NULL;
}

int sobas_config_set(struct sobas_config *c, const char *key, const char *value, sobas_warn_fn warn, void *ctx) {
  const struct key *k = find_key(key);
  if (!k) return -2;
  char *field = (char *)c + k->offset;
  switch (k->type) {
    case KEY_BOOL: {
      int b;
      if (sobas_parse_bool(value, &b) != 0) { warn_bad(k, value, "a boolean (1/0, yes/no, on/off)", warn, ctx); return -1; }
      *(int *)field = b;
      return 0;
    }
    case KEY_SIZE: {
      uint64_t v;
      if (sobas_parse_size(value, &v) != 0) { warn_bad(k, value, "a size (bytes, or with K/M/G)", warn, ctx); return -1; }
      *(uint64_t *)field = v;
      return 0;
    }
    case KEY_MS: {
      uint64_t v;
      if (sobas_parse_size(value, &v) != 0 || v == 0 || v > 60000) {
        warn_bad(k, value, "a duration in milliseconds (1..60000)", warn, ctx);
        return -1;
      }
      *(uint32_t *)field = (uint32_t)(v * 1000);
      return 0;
    }
    case KEY_PERIOD_MS: {
      uint64_t v;
      if (sobas_parse_size(value, &v) != 0 || v > 86400000) {
        warn_bad(k, value, "a duration in milliseconds (0..86400000, 0 = never)", warn, ctx);
        return -1;
      }
      *(uint32_t *)field = (uint32_t)v;
      return 0;
    }
    case KEY_PORT: {
      uint64_t v;
      if (sobas_parse_size(value, &v) != 0 || v == 0 || v > 65535) {
        warn_bad(k, value, "a UDP port (1..65535)", warn, ctx);
        return -1;
      }
      *(uint32_t *)field = (uint32_t)v;
      return 0;
    }
    case KEY_POLICY: {
      /* fixed takes its S after a colon; the others are bare names. */
      uint64_t bytes = 0;
      if (strncasecmp(value, "fixed:", 6) == 0 && sobas_parse_size(value + 6, &bytes) == 0 && bytes > 0) {
        *(int *)field = SOBAS_POLICY_FIXED;
        c->policy_bytes = bytes;
        return 0;
      }
      for (int i = SOBAS_POLICY_SOBAS; i < SOBAS_POLICY_FIXED; i++)
        if (strcasecmp(value, sobas_policy_name((enum sobas_policy)i)) == 0) {
          *(int *)field = i;
          return 0;
        }
      warn_bad(k, value, "a policy (sobas, off, bdp, drs, fixed:BYTES)", warn, ctx);
      return -1;
    }
    case KEY_RING:
      /* "off", a bare name (in /dev/shm) or an absolute path: a relative path would follow each
       * process's working directory. */
      if (strlen(value) >= SOBAS_PATH_MAX || (value[0] != '/' && strchr(value, '/')) || !value[0]) {
        warn_bad(k, value, "off, a name in /dev/shm, or an absolute path", warn, ctx);
        return -1;
      }
      strcpy(field, value);
      return 0;
    case KEY_PATH:
      /* "off" is the default the manual and the shipped sobas.conf name: writing it must not warn. */
      if (strcasecmp(value, "off") == 0) {
        field[0] = '\0';
        return 0;
      }
      /* A relative log path would follow each process's cwd: logs would scatter across directories. */
      if (value[0] != '/' || strlen(value) >= SOBAS_PATH_MAX) {
        warn_bad(k, value, "off, or an absolute path shorter than 512 bytes", warn, ctx);
        return -1;
      }
      strcpy(field, value);
      return 0;
  }
  return -2;
}

const char *sobas_config_file_key(size_t i) { return i < sizeof keys / sizeof *keys ? keys[i].file : NULL; }

static void trim(char **b, char **e) {
  while (*b < *e && isspace((unsigned char)**b)) (*b)++;
  while (*e > *b && isspace((unsigned char)(*e)[-1])) (*e)--;
}

void sobas_config_parse_text(struct sobas_config *c, const char *text, const char *source, sobas_warn_fn warn,
                             void *ctx) {
  unsigned lineno = 0;
  while (*text) {
    const char *nl = strchr(text, '\n');
    const char *end = nl ? nl : text + strlen(text);
    lineno++;
    char line[SOBAS_PATH_MAX + 64];
    size_t n = (size_t)(end - text);
    if (n >= sizeof line) n = sizeof line - 1; /* an over-long line then fails as a bad value, loudly */
    memcpy(line, text, n);
    line[n] = '\0';
    text = nl ? nl + 1 : end;

    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *b = line, *e = line + strlen(line);
    trim(&b, &e);
    if (b == e) continue;
    *e = '\0';
    char *eq = strchr(b, '=');
    char msg[SOBAS_PATH_MAX + 128];
    if (!eq) {
      snprintf(msg, sizeof msg, "sobas: %s:%u: expected key = value, ignoring \"%s\"", source, lineno, b);
      if (warn) warn(ctx, msg);
      continue;
    }
    char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
    trim(&kb, &ke);
    trim(&vb, &ve);
    *ke = '\0';
    *ve = '\0';
    if (sobas_config_set(c, kb, vb, warn, ctx) == -2) {
      snprintf(msg, sizeof msg, "sobas: %s:%u: unknown key \"%s\", ignored", source, lineno, kb);
      if (warn) warn(ctx, msg);
    }
  }
}

void sobas_config_apply_env(struct sobas_config *c, char *(*getenv_fn)(const char *), sobas_warn_fn warn,
                            void *ctx) {
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    const char *v = getenv_fn(keys[i].env);
    if (v) sobas_config_set(c, keys[i].env, v, warn, ctx);
  }
}
