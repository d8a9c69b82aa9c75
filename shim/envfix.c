/* envfix.c — keeps libsobas.so in LD_PRELOAD across exec with an explicit environment (pure). */
#include "envfix.h"

#include <string.h>

static const char key[] = "LD_PRELOAD=";
#define KEYLEN (sizeof key - 1)

size_t sobas_env_count(char *const *envp) {
  size_t n = 0;
  while (envp && envp[n]) n++;
  return n;
}

static const char *base_name(const char *p, size_t len) {
  for (size_t i = len; i > 0; i--)
    if (p[i - 1] == '/') return p + i;
  return p;
}

/* ld.so splits LD_PRELOAD on spaces and colons. */
static int names_lib(const char *list, const char *lib) {
  const char *lib_base = base_name(lib, strlen(lib));
  size_t lib_base_len = strlen(lib_base);
  while (*list) {
    size_t len = strcspn(list, " :");
    if (len) {
      const char *b = base_name(list, len);
      size_t blen = len - (size_t)(b - list);
      if ((len == strlen(lib) && memcmp(list, lib, len) == 0) ||
          (blen == lib_base_len && memcmp(b, lib_base, blen) == 0))
        return 1;
    }
    list += len;
    if (*list) list++;
  }
  return 0;
}

static const char *find_preload(char *const *envp, size_t *index) {
  for (size_t i = 0; envp && envp[i]; i++)
    if (strncmp(envp[i], key, KEYLEN) == 0) {
      *index = i;
      return envp[i] + KEYLEN;
    }
  return NULL;
}

size_t sobas_env_preload_len(char *const *envp, const char *lib) {
  size_t i;
  const char *old = find_preload(envp, &i);
  return KEYLEN + strlen(lib) + (old ? 1 + strlen(old) : 0) + 1;
}

char *const *sobas_env_with_preload(char *const *envp, const char *lib, char **out, char *buf) {
  size_t at = 0;
  const char *old = find_preload(envp, &at);
  if (old && names_lib(old, lib)) return envp;
  size_t n = sobas_env_count(envp);
  /* Appended after the host's own preloads: theirs keep the precedence they asked for. */
  strcpy(buf, key);
  if (old && *old) {
    strcat(buf, old);
    strcat(buf, ":");
  }
  strcat(buf, lib);
  for (size_t i = 0; i < n; i++) out[i] = envp[i];
  if (old)
    out[at] = buf;
  else
    out[n++] = buf;
  out[n] = NULL;
  return out;
}
