/* units: strict parsers for user-typed numbers. Each rejects what it cannot read fully,
 * so "-t 5x" or "-P 4.5" become clear errors instead of silent truncation. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Reads a non-negative decimal number and returns the rest of the string in *rest. */
/* Plain decimal only ("12", "1.5", ".5"): no sign, exponent or hex, which strtod would take. */
static int parse_number(const char *s, double *val, const char **rest)
{
    const char *p = s;
    char *end;
    int digits = 0, dots = 0;

    if (!s)
        return -EINVAL;
    for (; isdigit((unsigned char)*p) || *p == '.'; p++) {
        digits += isdigit((unsigned char)*p) != 0;
        dots += *p == '.';
    }
    if (!digits || dots > 1)
        return -EINVAL;
    errno = 0;
    *val = strtod(s, &end);
    if (end != p || errno == ERANGE || !isfinite(*val))
        return -ERANGE;
    *rest = end;
    return 0;
}

static int to_u64(double v, uint64_t *out)
{
    if (v + 0.5 >= 18446744073709551616.0)
        return -ERANGE;
    *out = (uint64_t)(v + 0.5); /* llround would overflow above 2^63 */
    return 0;
}

static double prefix_scale(char c, double base)
{
    switch (toupper((unsigned char)c)) {
    case 'K': return base;
    case 'M': return base * base;
    case 'G': return base * base * base;
    case 'T': return base * base * base * base;
    default: return 0;
    }
}

int units_parse_size(const char *s, uint64_t *bytes)
{
    const char *rest;
    double v, scale = 1;
    int rc = parse_number(s, &v, &rest);

    if (rc)
        return rc;
    if (*rest) {
        scale = prefix_scale(*rest, 1024);
        if (scale == 0)
            return -EINVAL;
        rest++;
        /* accept "K", "KB", "KiB" */
        if (!strcasecmp(rest, "iB") || !strcasecmp(rest, "B"))
            rest += strlen(rest);
        if (*rest)
            return -EINVAL;
    }
    if (v != floor(v) && scale == 1)
        return -EINVAL; /* a fraction of a byte */
    return to_u64(v * scale, bytes);
}

int units_parse_rate(const char *s, uint64_t *bps)
{
    const char *rest;
    double v, scale = 1;
    int rc = parse_number(s, &v, &rest);

    if (rc)
        return rc;
    if (*rest && prefix_scale(*rest, 1000) != 0) {
        scale = prefix_scale(*rest, 1000);
        rest++;
    }
    if (*rest) {
        if (!strcmp(rest, "B") || !strcmp(rest, "Bps") || !strcmp(rest, "B/s"))
            scale *= 8;
        else if (strcmp(rest, "b") && strcasecmp(rest, "bps") && strcmp(rest, "bit") &&
                 strcmp(rest, "bit/s") && strcmp(rest, "b/s"))
            return -EINVAL;
    }
    return to_u64(v * scale, bps);
}

int units_parse_duration(const char *s, uint64_t *ns)
{
    const char *rest;
    double v, scale;
    int rc = parse_number(s, &v, &rest);

    if (rc)
        return rc;
    if (!*rest || !strcmp(rest, "s"))
        scale = 1e9;
    else if (!strcmp(rest, "ms"))
        scale = 1e6;
    else if (!strcmp(rest, "us"))
        scale = 1e3;
    else if (!strcmp(rest, "m") || !strcmp(rest, "min"))
        scale = 60e9;
    else if (!strcmp(rest, "h"))
        scale = 3600e9;
    else
        return -EINVAL;
    return to_u64(v * scale, ns);
}

int units_parse_count(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || !isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

void units_format_rate(double bps, char *buf, size_t len)
{
    static const char *const names[] = {"bit/s", "Kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
    int i = 0;

    /* step up also when rounding would print 1000.0 */
    while (bps >= 999.95 && i < 4) {
        bps /= 1000;
        i++;
    }
    snprintf(buf, len, "%.*f %s", bps >= 100 ? 1 : 2, bps, names[i]);
}

void units_format_bytes(double bytes, char *buf, size_t len)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;

    while (bytes >= (i == 0 ? 1023.5 : 1023.95) && i < 4) {
        bytes /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        snprintf(buf, len, "%.*f %s", bytes >= 100 ? 1 : 2, bytes, names[i]);
}

void units_format_duration(double s, char *buf, size_t len)
{
    if (s >= 1)
        snprintf(buf, len, "%.3g s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.3g us", s * 1e6);
}
