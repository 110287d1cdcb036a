/* wanem: options, the two devices in their namespaces, the counters on SIGUSR1 and at exit.
 * See wanem.h for the parts and tests/tools/README.md for the usage and the design. */
#define _GNU_SOURCE
#include "wanem.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20
#define TUN_F_USO6 0x40
#endif

#define MAX_DELAY_NS (10ULL * 1000000000ULL)

struct opts {
    struct wanem_conf conf;
    const char *ns[2];
    const char *dev[2];
    const char *stats;
    const char *ready;
    uint64_t rt_prio;
    bool die_with_parent;
};

static void usage(FILE *f)
{
    fputs("usage: wanem [options]\n"
          "Joins two network namespaces through two TUN devices and holds each packet for a\n"
          "one-way delay. A value X,Y sets a->b to X and b->a to Y; a single value sets both.\n"
          "  --ns-a NS, --ns-b NS     namespace (name under /run/netns, or a path) of each device\n"
          "  --dev-a NAME, --dev-b NAME   device names (default wanem-a, wanem-b)\n"
          "  --delay T[,T]            one-way delay (10ms, 250us, 1.5ms; a plain number is ms)\n"
          "  --rtt T                  the round-trip time: T/2 each way\n"
          "  --jitter T[,T]           uniform +-T added to each packet's delay, order kept\n"
          "  --loss P[,P]             loss per wire segment, random (0.01 or 1%)\n"
          "  --loss-every N[,N]       lose every Nth segment instead\n"
          "  --reorder P[,P]          fraction of packets held back --reorder-gap longer\n"
          "  --reorder-gap T          (default 1ms)\n"
          "  --seed N                 of the random loss, jitter and reorder (default 1)\n"
          "  --limit BYTES            queue limit per direction (default 64M; K, M, G)\n"
          "  --limit-packets N        queue limit in packets per direction (default none)\n"
          "  --slack T                a release later than due by more is late (default 100us)\n"
          "  --stats FILE             counters as JSON on SIGUSR1 and at exit (default stdout)\n"
          "  --ready FILE             written with the pid once the devices exist\n"
          "  --rt PRIO                run as SCHED_FIFO at PRIO (1-99): wake-ups on time on a\n"
          "                           busy host\n"
          "  --die-with-parent        stop when the parent process exits\n",
          f);
}

static int bad(const char *opt, const char *val, const char *what)
{
    fprintf(stderr, "wanem: %s '%s': %s\n", opt, val, what);
    return -1;
}

/* a duration: a number with us, ms or s (ms when plain) */
static int parse_time(const char *opt, const char *s, uint64_t *ns)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0)
        return bad(opt, s, "expected a duration such as 10ms, 250us or 1.5s");
    if (!strcmp(end, "us"))
        v *= 1e3;
    else if (!strcmp(end, "ms") || !*end)
        v *= 1e6;
    else if (!strcmp(end, "s"))
        v *= 1e9;
    else
        return bad(opt, s, "the unit must be us, ms or s");
    if (v > (double)MAX_DELAY_NS)
        return bad(opt, s, "at most 10 s");
    *ns = (uint64_t)llround(v);
    return 0;
}

static int parse_frac(const char *opt, const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || !isfinite(v))
        return bad(opt, s, "expected a fraction (0.01) or a percentage (1%)");
    if (!strcmp(end, "%"))
        v /= 100;
    else if (*end)
        return bad(opt, s, "expected a fraction (0.01) or a percentage (1%)");
    if (v < 0 || v > 1)
        return bad(opt, s, "must be between 0 and 1 (0% and 100%)");
    *out = v;
    return 0;
}

static int parse_count(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-' || v > max)
        return bad(opt, s, "expected a whole number in range");
    *out = v;
    return *end ? bad(opt, s, "expected a whole number") : 0;
}

static int parse_size(const char *opt, const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v, mult = 1;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return bad(opt, s, "expected a size in bytes (K, M, G allowed)");
    if (*end == 'K' || *end == 'k')
        mult = 1ULL << 10;
    else if (*end == 'M' || *end == 'm')
        mult = 1ULL << 20;
    else if (*end == 'G' || *end == 'g')
        mult = 1ULL << 30;
    else if (*end)
        return bad(opt, s, "the suffix must be K, M or G");
    if (*end && end[1])
        return bad(opt, s, "the suffix must be K, M or G");
    if (v > (1ULL << 40) / mult)
        return bad(opt, s, "too large");
    *out = v * mult;
    return 0;
}

/* "X" or "X,Y": calls parse on each half (a->b, b->a) */
static int per_dir(const char *opt, const char *arg, int (*one)(const char *, const char *, void *),
                   void *out0, void *out1)
{
    char buf[64];
    char *comma;

    if (strlen(arg) >= sizeof(buf))
        return bad(opt, arg, "too long");
    memcpy(buf, arg, strlen(arg) + 1);
    comma = strchr(buf, ',');
    if (!comma)
        return one(opt, buf, out0) || one(opt, buf, out1) ? -1 : 0;
    *comma = '\0';
    return one(opt, buf, out0) || one(opt, comma + 1, out1) ? -1 : 0;
}

static int one_time(const char *o, const char *s, void *out) { return parse_time(o, s, out); }
static int one_frac(const char *o, const char *s, void *out) { return parse_frac(o, s, out); }
static int one_count(const char *o, const char *s, void *out)
{
    return parse_count(o, s, UINT32_MAX, out);
}

enum {
    O_NS_A = 256,
    O_NS_B,
    O_DEV_A,
    O_DEV_B,
    O_DELAY,
    O_RTT,
    O_JITTER,
    O_LOSS,
    O_LOSS_EVERY,
    O_REORDER,
    O_REORDER_GAP,
    O_SEED,
    O_LIMIT,
    O_LIMIT_PKTS,
    O_SLACK,
    O_STATS,
    O_READY,
    O_DIE,
    O_RT,
};

static const struct option longopts[] = {
    {"ns-a", required_argument, NULL, O_NS_A},
    {"ns-b", required_argument, NULL, O_NS_B},
    {"dev-a", required_argument, NULL, O_DEV_A},
    {"dev-b", required_argument, NULL, O_DEV_B},
    {"delay", required_argument, NULL, O_DELAY},
    {"rtt", required_argument, NULL, O_RTT},
    {"jitter", required_argument, NULL, O_JITTER},
    {"loss", required_argument, NULL, O_LOSS},
    {"loss-every", required_argument, NULL, O_LOSS_EVERY},
    {"reorder", required_argument, NULL, O_REORDER},
    {"reorder-gap", required_argument, NULL, O_REORDER_GAP},
    {"seed", required_argument, NULL, O_SEED},
    {"limit", required_argument, NULL, O_LIMIT},
    {"limit-packets", required_argument, NULL, O_LIMIT_PKTS},
    {"slack", required_argument, NULL, O_SLACK},
    {"stats", required_argument, NULL, O_STATS},
    {"ready", required_argument, NULL, O_READY},
    {"die-with-parent", no_argument, NULL, O_DIE},
    {"rt", required_argument, NULL, O_RT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse_opt(struct opts *o, int c, const char *arg)
{
    struct wanem_dir_conf *a = &o->conf.dir[0], *b = &o->conf.dir[1];
    uint64_t v;

    switch (c) {
    case O_NS_A: o->ns[0] = arg; return 0;
    case O_NS_B: o->ns[1] = arg; return 0;
    case O_DEV_A: o->dev[0] = arg; return 0;
    case O_DEV_B: o->dev[1] = arg; return 0;
    case O_DELAY: return per_dir("--delay", arg, one_time, &a->delay_ns, &b->delay_ns);
    case O_RTT:
        if (parse_time("--rtt", arg, &v))
            return -1;
        a->delay_ns = v / 2;
        b->delay_ns = v - v / 2;
        return 0;
    case O_JITTER: return per_dir("--jitter", arg, one_time, &a->jitter_ns, &b->jitter_ns);
    case O_LOSS: return per_dir("--loss", arg, one_frac, &a->loss, &b->loss);
    case O_LOSS_EVERY:
        return per_dir("--loss-every", arg, one_count, &a->loss_every, &b->loss_every);
    case O_REORDER: return per_dir("--reorder", arg, one_frac, &a->reorder, &b->reorder);
    case O_REORDER_GAP:
        if (parse_time("--reorder-gap", arg, &v))
            return -1;
        a->reorder_gap_ns = b->reorder_gap_ns = v;
        return 0;
    case O_SEED: return parse_count("--seed", arg, UINT64_MAX, &o->conf.seed);
    case O_LIMIT:
        if (parse_size("--limit", arg, &v))
            return -1;
        o->conf.limit_bytes = (size_t)v;
        return 0;
    case O_LIMIT_PKTS:
        if (parse_count("--limit-packets", arg, UINT32_MAX, &v))
            return -1;
        o->conf.limit_packets = (uint32_t)v;
        return 0;
    case O_SLACK: return parse_time("--slack", arg, &o->conf.slack_ns);
    case O_STATS: o->stats = arg; return 0;
    case O_READY: o->ready = arg; return 0;
    case O_DIE: o->die_with_parent = true; return 0;
    case O_RT:
        if (parse_count("--rt", arg, 99, &o->rt_prio))
            return -1;
        return o->rt_prio ? 0 : bad("--rt", arg, "a SCHED_FIFO priority is 1-99");
    default: return -1;
    }
}

__attribute__((format(printf, 1, 2))) static int refuse(const char *fmt, ...)
{
    va_list ap;

    fputs("wanem: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

static int check_opts(const struct opts *o)
{
    static const char *const dir[2] = {"a->b", "b->a"};

    for (int i = 0; i < 2; i++) {
        const struct wanem_dir_conf *d = &o->conf.dir[i];
        if (d->loss > 0 && d->loss_every)
            return refuse("--loss and --loss-every both set for %s: choose one", dir[i]);
        if (d->loss_every == 1)
            return refuse("--loss-every 1 would lose every packet (%s): use 2 or more", dir[i]);
        if (d->jitter_ns > d->delay_ns)
            return refuse("--jitter %.3f ms exceeds the %.3f ms delay of %s",
                          (double)d->jitter_ns / 1e6, (double)d->delay_ns / 1e6, dir[i]);
        if (strlen(o->dev[i]) >= IFNAMSIZ || !*o->dev[i])
            return refuse("--dev-%c '%s': a device name has 1-15 characters", 'a' + i, o->dev[i]);
    }
    if (!strcmp(o->dev[0], o->dev[1]) &&
        (o->ns[0] == o->ns[1] || (o->ns[0] && o->ns[1] && !strcmp(o->ns[0], o->ns[1]))))
        return refuse("--dev-a and --dev-b are both '%s' in one namespace: give two names",
                      o->dev[0]);
    if (o->conf.limit_bytes < 2 * wanem_ring_need(WANEM_MAX_UNIT))
        return refuse("--limit %zu is too small: at least %zu (two 64 KiB super-packets)",
                      o->conf.limit_bytes, 2 * wanem_ring_need(WANEM_MAX_UNIT));
    return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    int c;

    memset(o, 0, sizeof(*o));
    o->dev[0] = "wanem-a";
    o->dev[1] = "wanem-b";
    o->conf.seed = 1;
    o->conf.limit_bytes = 64u << 20;
    o->conf.slack_ns = 100000;
    o->conf.dir[0].reorder_gap_ns = o->conf.dir[1].reorder_gap_ns = 1000000;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            exit(0);
        }
        if (c == '?')
            return refuse("unknown option or missing value: '%s' (see wanem --help)",
                          argv[optind - 1]);
        if (parse_opt(o, c, optarg) < 0)
            return -1;
    }
    if (optind < argc)
        return bad("argument", argv[optind], "wanem takes options only");
    return check_opts(o);
}

/* A TUN device named name in namespace ns (NULL: this one), opened non-blocking with vnet
 * headers and TSO/USO offered, so the kernel hands over super-packets. The device exists as
 * long as the fd is open: closing it, or this process dying, removes it. */
static void ns_path(const char *ns, char *path, size_t len)
{
    snprintf(path, len, "%s%s", strchr(ns, '/') ? "" : "/run/netns/", ns);
}

static int open_tun(const char *ns, const char *name, int home, struct stat *ns_st, char *err,
                    size_t errlen)
{
    struct ifreq ifr = {0};
    char path[512];
    int nsfd = -1, fd = -1, hsz = WANEM_VNET_LEN;
    unsigned int off = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;

    if (ns) {
        ns_path(ns, path, sizeof(path));
        nsfd = open(path, O_RDONLY | O_CLOEXEC);
        if (nsfd < 0 || fstat(nsfd, ns_st) < 0 || setns(nsfd, CLONE_NEWNET) < 0) {
            snprintf(err, errlen, "network namespace %s: %s", path, strerror(errno));
            goto out;
        }
    }
    fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "/dev/net/tun: %s", strerror(errno));
        goto out;
    }
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
    memcpy(ifr.ifr_name, name, strlen(name)); /* checked: shorter than IFNAMSIZ */
    if (ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETVNETHDRSZ, &hsz) < 0 ||
        (ioctl(fd, TUNSETOFFLOAD, off | TUN_F_USO4 | TUN_F_USO6) < 0 &&
         ioctl(fd, TUNSETOFFLOAD, off) < 0)) {
        snprintf(err, errlen, "TUN device %s%s%s: %s", name, ns ? " in " : "", ns ? ns : "",
                 errno == EBUSY || errno == EINVAL ? "that name is taken by another device"
                                                   : strerror(errno));
        close(fd);
        fd = -1;
    }
out:
    if (nsfd >= 0) {
        close(nsfd);
        if (setns(home, CLONE_NEWNET) < 0) {
            snprintf(err, errlen, "back to the first network namespace: %s", strerror(errno));
            if (fd >= 0)
                close(fd);
            fd = -1;
        }
    }
    return fd;
}

struct report_ctx {
    const struct opts *o;
    struct stat ns_st[2]; /* the namespaces the devices were created in */
};

static void write_stats(struct wanem_relay *rl, void *ctx)
{
    const struct opts *o = ((struct report_ctx *)ctx)->o;
    char *json = wanem_stats_json(rl, o->dev, o->ns);
    char tmp[4096];
    FILE *f;

    if (!json) {
        fputs("wanem: out of memory writing the counters\n", stderr);
        return;
    }
    if (!o->stats) {
        printf("%s\n", json);
        fflush(stdout);
        free(json);
        return;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp", o->stats);
    f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", json) < 0 || fclose(f) != 0 || rename(tmp, o->stats) < 0)
        fprintf(stderr, "wanem: cannot write %s: %s\n", o->stats, strerror(errno));
    free(json);
}

/* Once a second: a namespace deleted by name (`ip netns del`) lives on while its device is
 * open, unreachable; the emulator then stops, so that nothing is left behind. */
static bool namespaces_there(void *ctx, char *err, size_t errlen)
{
    struct report_ctx *c = ctx;
    char path[512];
    struct stat st;

    for (int i = 0; i < 2; i++) {
        if (!c->o->ns[i])
            continue;
        ns_path(c->o->ns[i], path, sizeof(path));
        if (stat(path, &st) < 0 || st.st_dev != c->ns_st[i].st_dev ||
            st.st_ino != c->ns_st[i].st_ino) {
            snprintf(err, errlen, "network namespace %s is gone: stopping", path);
            return false;
        }
    }
    return true;
}

static int write_ready(const char *path)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0 || rename(tmp, path) < 0) {
        fprintf(stderr, "wanem: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct wanem_relay rl;
    struct report_ctx ctx = {.o = &o};
    char err[512] = "";
    int home, fd[2] = {-1, -1}, rc = 1;
    pid_t parent = getppid();

    if (parse_args(argc, argv, &o) < 0)
        return 2;
    if (o.die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent))
        return 1;
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake-ups on time, not up to 50 us late */
    if (o.rt_prio) {
        struct sched_param sp = {.sched_priority = (int)o.rt_prio};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
            fprintf(stderr, "wanem: --rt %d: %s\n", sp.sched_priority, strerror(errno));
            return 1;
        }
    }
    home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (home < 0) {
        fprintf(stderr, "wanem: /proc/self/ns/net: %s\n", strerror(errno));
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        fd[i] = open_tun(o.ns[i], o.dev[i], home, &ctx.ns_st[i], err, sizeof(err));
        if (fd[i] < 0)
            goto out;
    }
    if (wanem_relay_init(&rl, &o.conf, fd[0], fd[1], err, sizeof(err)) < 0) {
        wanem_relay_fini(&rl);
        goto out;
    }
    if (o.ready && write_ready(o.ready) < 0) {
        wanem_relay_fini(&rl);
        goto out;
    }
    const struct wanem_hooks hooks = {
        .report = write_stats, .keep_going = namespaces_there, .ctx = &ctx};
    rc = wanem_relay_run(&rl, &hooks, err, sizeof(err)) < 0 ? 1 : 0;
    wanem_relay_fini(&rl);
    write_stats(&rl, &ctx);
out:
    if (*err)
        fprintf(stderr, "wanem: %s\n", err);
    for (int i = 0; i < 2; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    close(home);
    return rc;
}
