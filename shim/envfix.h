/* envfix.h — keeps libsobas.so in LD_PRELOAD of an environment handed to exec (pure). */
#ifndef SOBAS_ENVFIX_H
#define SOBAS_ENVFIX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of entries in envp (NULL counts as 0). */
size_t sobas_env_count(char *const *envp);

/* Bytes a new LD_PRELOAD entry may need for this envp and lib (including the NUL). */
size_t sobas_env_preload_len(char *const *envp, const char *lib);

/* Returns envp itself when its LD_PRELOAD already names `lib` (the same path, or a file of the same
 * name); otherwise builds in `out` (sobas_env_count(envp) + 2 slots) a copy whose LD_PRELOAD also
 * names lib, writing the new "LD_PRELOAD=..." into buf (sobas_env_preload_len bytes). */
char *const *sobas_env_with_preload(char *const *envp, const char *lib, char **out, char *buf);

#ifdef __cplusplus
}
#endif
#endif
