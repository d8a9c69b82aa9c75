/* units.c — strict unit parsers: a typo in a testbed argument must fail loudly, not emulate a wrong path. */
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A non-negative finite decimal number followed by a suffix; *rest points at the suffix. */
static int number(const char *s, double *v, const char **rest) {
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return 0;
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  if (end == s || errno || !isfinite(*v) || *v < 0) return 0;
  /* strtod accepts "inf", "nan" and hex; the first two are caught above, hex is not a unit we use. */
  if (strchr(s, 'x') || strchr(s, 'X')) return 0;
  *rest = end;
  return 1;
}

static int scaled(double v, double scale, uint64_t *out) {
  double r = v * scale;
  if (r > 1.8e19) return 0;
  *out = (uint64_t)llround(r);
  return 1;
}

static double si(char c) {
  switch (c) {
  case 'k': case 'K': return 1e3;
  case 'm': case 'M': return 1e6;
  case 'g': case 'G': return 1e9;
  default: return 0;
  }
}

int wan_parse_rate(const char *s, uint64_t *out) {
  double v, mul = 1;
  const char *r;
  if (!number(s, &v, &r)) return 0;
  if (*r && si(*r)) mul = si(*r++);
  if (*r && strcmp(r, "bit") != 0 && strcmp(r, "bps") != 0) return 0;
  return scaled(v, mul, out);
}

int wan_parse_duration(const char *s, uint64_t *out) {
  double v;
  const char *r;
  if (!number(s, &v, &r)) return 0;
  double mul;
  if (!*r || !strcmp(r, "ms")) mul = 1e6;
  else if (!strcmp(r, "us")) mul = 1e3;
  else if (!strcmp(r, "ns")) mul = 1;
  else if (!strcmp(r, "s")) mul = 1e9;
  else return 0;
  return scaled(v, mul, out);
}

int wan_parse_bytes(const char *s, uint64_t *out) {
  double v, mul = 1;
  const char *r;
  if (!number(s, &v, &r)) return 0;
  if (*r && si(*r)) mul = si(*r++);
  if (*r) return 0;
  return scaled(v, mul, out);
}

int wan_parse_probability(const char *s, double *out) {
  double v;
  const char *r;
  if (!number(s, &v, &r)) return 0;
  if (!strcmp(r, "%")) v /= 100;
  else if (*r) return 0;
  if (v > 1) return 0;
  *out = v;
  return 1;
}
