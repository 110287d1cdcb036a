/* wanem_stats: the settings and counters as one JSON document (see tests/tools/README.md). */
#define _GNU_SOURCE
#include "wanem.h"

#include <cjson/cJSON.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char *const proto_names[WANEM_P_COUNT] = {"tcp", "udp", "icmp", "other"};

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static void num(cJSON *o, const char *k, double v) { cJSON_AddNumberToObject(o, k, v); }

/* segment counts by protocol and their total */
static cJSON *by_proto(const uint64_t n[WANEM_P_COUNT])
{
    cJSON *o = cJSON_CreateObject();
    uint64_t total = 0;

    for (int p = 0; p < WANEM_P_COUNT; p++) {
        num(o, proto_names[p], (double)n[p]);
        total += n[p];
    }
    num(o, "total", (double)total);
    return o;
}

static cJSON *conf_json(const struct wanem_dir_conf *c)
{
    cJSON *o = cJSON_CreateObject();

    num(o, "delay_us", (double)c->delay_ns / 1e3);
    num(o, "jitter_us", (double)c->jitter_ns / 1e3);
    num(o, "loss", c->loss);
    num(o, "loss_every", (double)c->loss_every);
    num(o, "reorder", c->reorder);
    num(o, "reorder_gap_us", (double)c->reorder_gap_ns / 1e3);
    return o;
}

static cJSON *late_json(const struct wanem_counters *c, uint64_t slack_ns)
{
    static const char *const edges[6] = {"lt_50us",  "lt_100us", "lt_200us",
                                         "lt_500us", "lt_1ms",   "ge_1ms"};
    cJSON *o = cJSON_CreateObject(), *h = cJSON_CreateObject();
    uint64_t released = 0;

    for (int b = 0; b < 6; b++) {
        num(h, edges[b], (double)c->late_hist[b]);
        released += c->late_hist[b];
    }
    num(o, "slack_us", (double)slack_ns / 1e3);
    num(o, "count", (double)c->late);
    num(o, "mean_us", released ? (double)c->late_sum_ns / (double)released / 1e3 : 0);
    num(o, "max_us", (double)c->late_max_ns / 1e3);
    cJSON_AddItemToObject(o, "histogram", h);
    return o;
}

static cJSON *dir_json(const struct wanem_dir *d, uint64_t slack_ns)
{
    const struct wanem_counters *c = &d->c;
    cJSON *o = cJSON_CreateObject(), *hold = cJSON_CreateObject();

    cJSON_AddItemToObject(o, "config", conf_json(d->conf));
    num(o, "reads", (double)c->reads);
    num(o, "read_bytes", (double)c->read_bytes);
    num(o, "super_packets", (double)c->super_packets);
    num(o, "unsplittable", (double)c->unsplittable);
    num(o, "segments", (double)c->segments);
    num(o, "wire_bytes", (double)c->wire_bytes);
    cJSON_AddItemToObject(o, "injected_drops", by_proto(c->injected));
    num(o, "split_super_packets", (double)c->split_units);
    cJSON_AddItemToObject(o, "queue_drops", by_proto(c->queue_drops));
    num(o, "queue_drop_bytes", (double)c->queue_drop_bytes);
    num(o, "writes", (double)c->writes);
    num(o, "write_bytes", (double)c->write_bytes);
    num(o, "write_segments", (double)c->write_segments);
    num(o, "write_errors", (double)c->write_errors);
    cJSON_AddStringToObject(o, "write_error", c->write_errno ? strerror(c->write_errno) : "");
    num(o, "reorder_held", (double)c->reorder_held);
    num(o, "reordered", (double)c->reordered);
    cJSON_AddItemToObject(o, "reordered_segments", by_proto(c->reordered_segs));
    num(o, "reorder_pool_full", (double)c->reorder_pool_full);
    num(o, "queue_max_bytes", (double)c->queue_max_bytes);
    num(o, "queue_max_packets", (double)c->queue_max_packets);
    num(o, "queued_packets", (double)d->ring.count + d->pool_used);
    num(o, "discarded_at_exit", (double)c->discarded_at_exit);
    num(hold, "mean_us", c->writes ? (double)c->hold_sum_ns / (double)c->writes / 1e3 : 0);
    num(hold, "min_us", c->writes ? (double)c->hold_min_ns / 1e3 : 0);
    num(hold, "max_us", (double)c->hold_max_ns / 1e3);
    cJSON_AddItemToObject(o, "hold", hold);
    cJSON_AddItemToObject(o, "late", late_json(c, slack_ns));
    return o;
}

char *wanem_stats_json(const struct wanem_relay *rl, const char *const dev[2],
                       const char *const ns[2])
{
    cJSON *root = cJSON_CreateObject(), *dirs = cJSON_CreateObject(), *lim = cJSON_CreateObject();
    struct rusage ru = {0};
    struct timespec now;
    char *out;

    if (!root || !dirs || !lim) {
        cJSON_Delete(root);
        cJSON_Delete(dirs);
        cJSON_Delete(lim);
        return NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    getrusage(RUSAGE_SELF, &ru);
    num(root, "pid", (double)getpid());
    cJSON_AddStringToObject(root, "dev_a", dev[0]);
    cJSON_AddStringToObject(root, "dev_b", dev[1]);
    cJSON_AddStringToObject(root, "netns_a", ns[0] ? ns[0] : "");
    cJSON_AddStringToObject(root, "netns_b", ns[1] ? ns[1] : "");
    num(root, "seed", (double)rl->conf.seed);
    num(lim, "bytes", (double)rl->conf.limit_bytes);
    num(lim, "packets", (double)rl->conf.limit_packets);
    cJSON_AddItemToObject(root, "queue_limit", lim);
    num(root, "elapsed_s",
        ((double)now.tv_sec * 1e9 + (double)now.tv_nsec - (double)rl->start_ns) / 1e9);
    num(root, "cpu_user_s", tv_s(ru.ru_utime));
    num(root, "cpu_sys_s", tv_s(ru.ru_stime));
    num(root, "timer_early_us", (double)rl->wake_est_ns / 1e3);
    num(root, "spin_s", (double)rl->spin_ns / 1e9);
    cJSON_AddItemToObject(dirs, "a_to_b", dir_json(&rl->dir[0], rl->conf.slack_ns));
    cJSON_AddItemToObject(dirs, "b_to_a", dir_json(&rl->dir[1], rl->conf.slack_ns));
    cJSON_AddItemToObject(root, "directions", dirs);
    out = cJSON_Print(root);
    cJSON_Delete(root);
    return out;
}
