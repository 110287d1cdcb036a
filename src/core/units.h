/* units: parsing and printing of sizes, rates and durations as users type them; every command
 * prints a rate, a size or a duration through here, so one run reads the same everywhere. */
#ifndef NETRIG_UNITS_H
#define NETRIG_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Sizes in bytes: "128K" = 131072 (K/M/G/T are powers of 1024, as iperf3 does for -l/-w).
 * Returns 0, or -EINVAL for garbage, -ERANGE for overflow. */
int units_parse_size(const char *s, uint64_t *bytes);

/* Rates in bits/s: "10G" = 10e9, "200M" = 200e6 (powers of 1000, as every rate tool does).
 * A trailing "B"/"Bps" (e.g. "100MB") means bytes per second and is multiplied by 8. */
int units_parse_rate(const char *s, uint64_t *bps);

/* Durations: "10" or "10s" seconds, "500ms", "2m", "1h". Result in nanoseconds. */
int units_parse_duration(const char *s, uint64_t *ns);

/* Integer counts ("4", "1000"); rejects signs, spaces and trailing garbage. */
int units_parse_count(const char *s, uint64_t *out);

/* "21.37 Gbit/s" style, with the unit chosen for 3-4 significant digits. */
void units_format_rate(double bps, char *buf, size_t len);
/* "1.23 GiB" style (K/M/G/T are powers of 1024, as the size parser's). */
void units_format_bytes(double bytes, char *buf, size_t len);
/* A duration in seconds as "1.5 s", "40.3 ms" or "850 us" (three significant digits). */
void units_format_duration(double s, char *buf, size_t len);

#endif
