/* lifecycle.h — process-level events the interposed layer reports: seccomp on, exec environment. */
#ifndef SOBAS_LIFECYCLE_H
#define SOBAS_LIFECYCLE_H

/* Before prctl(op, arg, ...): PR_SET_SECCOMP turns the shim quiet first, so no own syscall can race the filter. */
void sobas_note_prctl(int op, unsigned long arg);
/* Before syscall(nr, op, ...): seccomp(2) as libseccomp calls it. */
void sobas_note_syscall(long nr, long op);
/* Path of this library, NULL if unknown (then exec environments are passed as they are). */
const char *sobas_self_path(void);

#endif
