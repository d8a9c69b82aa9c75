/* units.h — strict parsers for the testbed programs' rate, duration, byte and probability arguments. */
#ifndef WAN_UNITS_H
#define WAN_UNITS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each returns 1 and stores the value, or 0 (value untouched) on anything malformed or out of range.
 * Suffixes are SI (1000-based), as tc and iperf3 use for rates:
 *   rate:     "97M", "1G", "500k", "1.5G", optional "bit" or "bps" after the suffix -> bit/s
 *   duration: "20ms", "150us", "1s", "500ns"; a bare number is milliseconds -> ns
 *   bytes:    "1500", "400k", "2.5M" -> bytes (also counts: "10000")
 *   prob:     "0.01", "1%" -> 0..1 */
int wan_parse_rate(const char *s, uint64_t *out);
int wan_parse_duration(const char *s, uint64_t *out);
int wan_parse_bytes(const char *s, uint64_t *out);
int wan_parse_probability(const char *s, double *out);

#ifdef __cplusplus
}
#endif
#endif
