/* exporter_config: the configuration file of 'netrig exporter' (docs/exporter.md): global
 * keys, then one [target NAME] section per scheduled test, as 'key = value' lines. Every
 * problem is refused with the file, the line and what is wrong. */
#ifndef NETRIG_EXPORTER_CONFIG_H
#define NETRIG_EXPORTER_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"

#define EXPORTER_MAX_TARGETS 64
#define EXPORTER_NAME_LEN    64
#define EXPORTER_MAX_FILE    (256 * 1024)
/* Defaults and bounds of the global limits. */
#define EXPORTER_MIN_INTERVAL_NS   (60ULL * 1000000000ULL)   /* default min_interval */
#define EXPORTER_FLOOR_INTERVAL_NS (1000000000ULL)           /* min_interval is at least 1 s */
#define EXPORTER_MAX_DURATION_NS   (30ULL * 1000000000ULL)   /* default max_duration */
#define EXPORTER_CEIL_DURATION_NS  (3600ULL * 1000000000ULL) /* max_duration at most 1 h */

struct exporter_target {
    char name[EXPORTER_NAME_LEN];
    struct client_opts o; /* host, port, test parameters */
    uint64_t interval_ns; /* one run every interval */
    int line;             /* of its [target] header */
};

struct exporter_config {
    char listen[280];         /* "" = not set in the file */
    uint64_t min_interval_ns; /* no target runs more often */
    uint64_t max_duration_ns; /* no target's test runs longer (warm-up included) */
    uint32_t ntargets;
    struct exporter_target t[EXPORTER_MAX_TARGETS];
};

/* Reads and checks path. On error: -1 and err = "PATH:LINE: problem" (or "PATH: problem"). */
int exporter_config_load(const char *path, struct exporter_config *c, char *err, size_t errlen);
/* The same for text already in memory; name stands for the file in messages. */
int exporter_config_parse(const char *text, const char *name, struct exporter_config *c, char *err,
                          size_t errlen);

#endif
