/* hb.h — names the shim's lock-free happens-before edges (__atomic release → acquire) for helgrind, which sees only pthread primitives; no-ops natively. */
#ifndef SOBAS_HB_H
#define SOBAS_HB_H

/* Valgrind's client requests are a few no-op instructions outside valgrind: kept in every build, so
 * that `scripts/tsan.sh --helgrind` checks the shim that ships. ThreadSanitizer needs none of this. */
#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#define SOBAS_HB_BEFORE(p) ANNOTATE_HAPPENS_BEFORE(p)
#define SOBAS_HB_AFTER(p) ANNOTATE_HAPPENS_AFTER(p)
/* A word only ever read and written with __atomic builtins: helgrind would take it for a plain one. */
#define SOBAS_HB_ATOMIC(p) ANNOTATE_BENIGN_RACE_SIZED((p), sizeof *(p), "accessed only with __atomic builtins")
#endif
#endif
#ifndef SOBAS_HB_BEFORE
#define SOBAS_HB_BEFORE(p) ((void)(p))
#define SOBAS_HB_AFTER(p) ((void)(p))
#define SOBAS_HB_ATOMIC(p) ((void)(p))
#endif

#endif
