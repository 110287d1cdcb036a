/* wanem_relay: the event loop. One thread, one epoll set: the two devices, one timerfd armed
 * for the earliest packet due, one signalfd. Each turn releases every packet that is due (in
 * due order, across the ring and the reorder pool), then reads a batch from each readable
 * device: each unit is timestamped, its segments drawn for loss, and the survivors go into
 * the direction's ring, due at arrival + delay (+ jitter, never before the packet ahead).
 * Writes into a TUN device run the receiving stack in this thread, so a release costs what
 * the receive path costs; nothing else blocks. */
#define _GNU_SOURCE
#include "wanem.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define READ_BATCH 16 /* units read from one device per turn */
#define POOL_SLOTS 64 /* packets held back for reordering at once */
#define EV_TIMER   2
#define EV_SIGNAL  3
#define EV_HOUSE   4
#define WAKE_MAX   200000 /* ns: the early wake-up is never more than this */

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static size_t slot_size(void) { return wanem_ring_need(WANEM_MAX_UNIT); }

static struct wanem_entry *pool_slot(const struct wanem_dir *d, uint32_t i)
{
    return (struct wanem_entry *)(d->pool + (size_t)i * slot_size());
}

static int dir_init(struct wanem_relay *rl, int i, int rfd, int wfd)
{
    struct wanem_dir *d = &rl->dir[i];

    d->conf = &rl->conf.dir[i];
    d->rfd = rfd;
    d->wfd = wfd;
    d->c.hold_min_ns = UINT64_MAX;
    d->loss.p = d->conf->loss;
    d->loss.every = d->conf->loss_every;
    /* each direction and each use its own stream, all from the one seed */
    wanem_rng_seed(&d->loss.rng, rl->conf.seed * 4 + (uint64_t)i * 2);
    wanem_rng_seed(&d->rng, rl->conf.seed * 4 + (uint64_t)i * 2 + 1);
    if (wanem_ring_init(&d->ring, rl->conf.limit_bytes) < 0)
        return -1;
    if (d->conf->reorder > 0) {
        d->pool = calloc(POOL_SLOTS, slot_size());
        if (!d->pool)
            return -1;
        d->pool_n = POOL_SLOTS;
    }
    return 0;
}

int wanem_relay_init(struct wanem_relay *rl, const struct wanem_conf *conf, int fd_a, int fd_b,
                     char *err, size_t errlen)
{
    struct epoll_event ev = {.events = EPOLLIN};
    sigset_t sigs;

    memset(rl, 0, sizeof(*rl));
    rl->conf = *conf;
    rl->ep = rl->tfd = rl->sigfd = rl->hfd = -1;
    rl->scratch = malloc(WANEM_MAX_UNIT);
    if (!rl->scratch || dir_init(rl, 0, fd_a, fd_b) < 0 || dir_init(rl, 1, fd_b, fd_a) < 0) {
        snprintf(err, errlen, "cannot allocate the queues (%zu bytes each): %s", conf->limit_bytes,
                 strerror(errno));
        return -1;
    }
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGUSR1);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    rl->ep = epoll_create1(EPOLL_CLOEXEC);
    rl->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    rl->sigfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
    rl->hfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    const struct itimerspec second = {.it_value = {.tv_sec = 1}, .it_interval = {.tv_sec = 1}};
    if (rl->ep < 0 || rl->tfd < 0 || rl->sigfd < 0 || rl->hfd < 0 ||
        timerfd_settime(rl->hfd, 0, &second, NULL) < 0) {
        snprintf(err, errlen, "epoll, timerfd or signalfd: %s", strerror(errno));
        return -1;
    }
    const int fds[5] = {fd_a, fd_b, rl->tfd, rl->sigfd, rl->hfd};
    for (uint32_t k = 0; k < 5; k++) {
        ev.data.u32 = k;
        if (epoll_ctl(rl->ep, EPOLL_CTL_ADD, fds[k], &ev) < 0) {
            snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
            return -1;
        }
    }
    rl->start_ns = mono_ns();
    return 0;
}

static uint64_t release_time(struct wanem_dir *d, uint64_t arrival)
{
    uint64_t t = arrival + d->conf->delay_ns;
    uint64_t j = d->conf->jitter_ns;

    if (j) {
        t += (uint64_t)(wanem_rng_unit(&d->rng) * (double)(2 * j + 1));
        t = t > j ? t - j : 0;
        if (t < arrival)
            t = arrival;
    }
    return t < d->last_release_ns ? d->last_release_ns : t; /* no overtaking in the FIFO */
}

static void count_queue_drop(struct wanem_dir *d, uint8_t proto, uint32_t segs, uint64_t bytes)
{
    d->c.queue_drops[proto] += segs;
    d->c.queue_drop_bytes += bytes;
}

/* A packet held back: copied into a free pool slot, due gap later. */
static bool hold_back(struct wanem_dir *d, const struct wanem_entry *e)
{
    if (d->pool_used == d->pool_n) {
        d->c.reorder_pool_full++;
        return false;
    }
    for (uint32_t i = 0; i < d->pool_n; i++) {
        struct wanem_entry *s = pool_slot(d, i);
        if (s->len)
            continue;
        memcpy(s, e, sizeof(*e) + e->len);
        s->release_ns += d->conf->reorder_gap_ns;
        d->pool_used++;
        d->c.reorder_held++;
        return true;
    }
    return false;
}

/* Queues the unit in e (reserved in the ring, data filled): into the ring, or held back. */
static void enqueue(struct wanem_dir *d, struct wanem_entry *e, size_t len, uint32_t segs,
                    uint8_t proto, uint64_t arrival, uint64_t release)
{
    e->len = (uint32_t)len;
    e->segs = segs & 0xffffff;
    e->proto = proto;
    e->arrival_ns = arrival;
    e->release_ns = release;
    e->seq = d->seq++;
    if (d->conf->reorder > 0 && wanem_rng_unit(&d->rng) < d->conf->reorder && hold_back(d, e))
        return;
    wanem_ring_commit(&d->ring);
    d->last_release_ns = release;
    if (d->ring.used > d->c.queue_max_bytes)
        d->c.queue_max_bytes = d->ring.used;
    if (d->ring.count > d->c.queue_max_packets)
        d->c.queue_max_packets = d->ring.count;
}

/* Room in the ring for a len-byte unit under both limits, else NULL. */
static struct wanem_entry *room(struct wanem_relay *rl, struct wanem_dir *d, size_t len)
{
    if (rl->conf.limit_packets && d->ring.count >= rl->conf.limit_packets)
        return NULL;
    return wanem_ring_reserve(&d->ring, len);
}

/* The surviving runs of a super-packet (the unit in rl->scratch), each queued on its own. */
static void queue_runs(struct wanem_relay *rl, struct wanem_dir *d, const struct wanem_pkt *p,
                       uint64_t arrival, uint64_t release)
{
    uint32_t i = 0, n;

    d->c.split_units++;
    while ((n = wanem_pkt_next_run(rl->drop, p->segs, &i))) {
        size_t plen = (size_t)n * p->gso_size;
        size_t off = (size_t)i * p->gso_size;
        if (plen > p->payload - off)
            plen = p->payload - off;
        size_t len = WANEM_VNET_LEN + p->hdr_len + plen;
        struct wanem_entry *e = room(rl, d, len);
        if (!e || wanem_pkt_run(rl->scratch, p, i, n, e->data, len) != len)
            count_queue_drop(d, p->proto, n, plen + (uint64_t)n * p->hdr_len);
        else
            enqueue(d, e, len, n, p->proto, arrival, release);
        i += n;
    }
}

/* Draws loss for each segment of the unit; returns how many are lost. */
static uint32_t draw_loss(struct wanem_relay *rl, struct wanem_dir *d, const struct wanem_pkt *p)
{
    uint32_t lost = 0;

    if (!wanem_loss_active(&d->loss))
        return 0;
    memset(rl->drop, 0, (p->segs + 7) / 8);
    for (uint32_t i = 0; i < p->segs; i++) {
        if (wanem_loss_draw(&d->loss)) {
            rl->drop[i / 8] |= (uint8_t)(1u << (i % 8));
            lost++;
        }
    }
    d->c.injected[p->proto] += lost;
    return lost;
}

/* One unit from the device: 1, 0 when there was none, -1 on a device error. */
static int read_one(struct wanem_relay *rl, struct wanem_dir *d)
{
    struct wanem_entry *e = room(rl, d, WANEM_MAX_UNIT);
    uint8_t *buf = e ? e->data : rl->scratch;
    struct wanem_pkt p;
    ssize_t n = read(d->rfd, buf, WANEM_MAX_UNIT);

    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    uint64_t now = mono_ns();
    wanem_pkt_parse(buf, (size_t)n, &p);
    d->c.reads++;
    d->c.read_bytes += (uint64_t)n;
    d->c.segments += p.segs;
    d->c.wire_bytes += p.wire_len;
    d->c.super_packets += p.splittable;
    d->c.unsplittable += p.gso_type != 0 && !p.splittable;
    uint32_t lost = draw_loss(rl, d, &p);
    uint64_t release = release_time(d, now);
    if (lost == p.segs)
        return 1;
    if (lost) {
        if (buf != rl->scratch)
            memcpy(rl->scratch, buf, (size_t)n);
        queue_runs(rl, d, &p, now, release);
        return 1;
    }
    if (!e) { /* it was read aside: is there room for its real size? */
        e = room(rl, d, (size_t)n);
        if (!e) {
            count_queue_drop(d, p.proto, p.segs, p.wire_len);
            return 1;
        }
        memcpy(e->data, rl->scratch, (size_t)n);
    }
    enqueue(d, e, (size_t)n, p.segs, p.proto, now, release);
    return 1;
}

/* The lateness of every release; the hold time of those written (the per-write mean). */
static void count_release(struct wanem_dir *d, const struct wanem_entry *e, uint64_t now,
                          uint64_t slack, bool written)
{
    static const uint64_t edges[5] = {50000, 100000, 200000, 500000, 1000000};
    uint64_t late = now > e->release_ns ? now - e->release_ns : 0;
    uint64_t hold = now - e->arrival_ns;
    int b = 0;

    while (b < 5 && late >= edges[b])
        b++;
    d->c.late_hist[b]++;
    d->c.late += late > slack;
    d->c.late_sum_ns += late;
    if (late > d->c.late_max_ns)
        d->c.late_max_ns = late;
    if (!written)
        return;
    d->c.writes++;
    d->c.write_bytes += e->len - WANEM_VNET_LEN;
    d->c.write_segments += e->segs;
    d->c.hold_sum_ns += hold;
    if (hold < d->c.hold_min_ns)
        d->c.hold_min_ns = hold;
    if (hold > d->c.hold_max_ns)
        d->c.hold_max_ns = hold;
}

static struct wanem_entry *pool_first(const struct wanem_dir *d)
{
    struct wanem_entry *best = NULL;

    for (uint32_t i = 0; d->pool_used && i < d->pool_n; i++) {
        struct wanem_entry *s = pool_slot(d, i);
        if (s->len && (!best || s->release_ns < best->release_ns))
            best = s;
    }
    return best;
}

/* The packet due first in this direction, from the ring or the pool; *from_pool says which. */
static struct wanem_entry *next_due(const struct wanem_dir *d, bool *from_pool)
{
    struct wanem_entry *r = wanem_ring_head(&d->ring), *s = pool_first(d);

    *from_pool = s && (!r || s->release_ns < r->release_ns);
    return *from_pool ? s : r;
}

/* Waits out the last few microseconds before t: a wake-up came earlier than the estimate. */
static uint64_t spin_until(uint64_t t)
{
    uint64_t now;

    while ((now = mono_ns()) < t)
        ;
    return now;
}

/* Writes one due packet into the other device and lets it go. */
static void release(struct wanem_relay *rl, struct wanem_dir *d, struct wanem_entry *e, bool pooled,
                    uint64_t now)
{
    bool written = write(d->wfd, e->data, e->len) == (ssize_t)e->len;

    if (!written) {
        d->c.write_errors += e->segs;
        d->c.write_errno = errno;
    }
    count_release(d, e, now, rl->conf.slack_ns, written);
    if (pooled) {
        /* a later packet of the same protocol went first: a UDP datagram overtaken only by the
         * control connection's TCP reaches its receiver in order */
        if (d->released_seq[e->proto] > e->seq + 1) {
            d->c.reordered++;
            d->c.reordered_segs[e->proto] += e->segs;
        }
        e->len = 0;
        d->pool_used--;
    } else {
        wanem_ring_pop(&d->ring);
    }
    if (e->seq + 1 > d->released_seq[e->proto])
        d->released_seq[e->proto] = e->seq + 1;
}

/* Releases every packet that is due, both directions in due order; one due within the
 * timer's early margin is waited for (spun), so nothing leaves early. */
static void release_due(struct wanem_relay *rl)
{
    for (;;) {
        struct wanem_entry *e = NULL, *x;
        bool pooled = false, xp;
        int dir = 0;
        for (int i = 0; i < 2; i++) {
            x = next_due(&rl->dir[i], &xp);
            if (x && (!e || x->release_ns < e->release_ns)) {
                e = x;
                pooled = xp;
                dir = i;
            }
        }
        uint64_t now = mono_ns();
        if (!e || e->release_ns > now + rl->wake_est_ns)
            return;
        if (e->release_ns > now) {
            uint64_t t0 = now;
            now = spin_until(e->release_ns);
            rl->spin_ns += now - t0;
        }
        release(rl, &rl->dir[dir], e, pooled, now);
    }
}

/* A timer wake-up came now: how late it was, and the 75th percentile of the last 64 such
 * latencies, by which the timer is then armed early. On a VM a wake-up comes 30-100 us after
 * its time; arming by the minimum still leaves most releases 20-50 us late, arming by the
 * 75th percentile leaves a quarter of them late and makes the rest spin a few microseconds
 * (measured: no more CPU per Gbit/s, hold 40 us closer to the delay under load). */
static void learn_wake(struct wanem_relay *rl, uint64_t now)
{
    uint32_t sorted[64], n, k;
    uint64_t late;

    if (!rl->armed_ns || rl->armed_ns <= rl->armed_at_ns || now < rl->armed_ns)
        return; /* armed in the past, or not a sleep that ended on time */
    late = now - rl->armed_ns;
    rl->wake_ns[rl->wake_n++ % 64] = (uint32_t)(late < WAKE_MAX ? late : WAKE_MAX);
    n = rl->wake_n < 64 ? rl->wake_n : 64;
    for (uint32_t i = 0; i < n; i++) { /* insertion sort: 64 at most */
        uint32_t v = rl->wake_ns[i];
        for (k = i; k > 0 && sorted[k - 1] > v; k--)
            sorted[k] = sorted[k - 1];
        sorted[k] = v;
    }
    rl->wake_est_ns = sorted[(n - 1) * 3 / 4];
}

static void arm_timer(struct wanem_relay *rl)
{
    uint64_t next = 0;
    bool pooled;

    for (int i = 0; i < 2; i++) {
        struct wanem_entry *e = next_due(&rl->dir[i], &pooled);
        if (e && (!next || e->release_ns < next))
            next = e->release_ns;
    }
    if (next)
        next = next > rl->wake_est_ns ? next - rl->wake_est_ns : 1;
    if (next == rl->armed_ns)
        return;
    struct itimerspec its = {.it_value = {.tv_sec = (time_t)(next / 1000000000ULL),
                                          .tv_nsec = (long)(next % 1000000000ULL)}};
    if (next && !its.it_value.tv_sec && !its.it_value.tv_nsec)
        its.it_value.tv_nsec = 1;
    timerfd_settime(rl->tfd, TFD_TIMER_ABSTIME, &its, NULL);
    rl->armed_ns = next;
    rl->armed_at_ns = mono_ns();
}

/* 1: go on, 0: asked to stop */
static int on_signal(struct wanem_relay *rl, const struct wanem_hooks *h)
{
    struct signalfd_siginfo si;

    while (read(rl->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo != SIGUSR1)
            return 0;
        if (h->report)
            h->report(rl, h->ctx);
    }
    return 1;
}

/* 1: go on, 0: stop, -1: a device error */
static int on_event(struct wanem_relay *rl, const struct wanem_hooks *h, uint32_t what,
                    uint64_t woke, char *err, size_t errlen)
{
    uint64_t expirations;
    int r = 1;

    switch (what) {
    case 0:
    case 1:
        for (int b = 0; b < READ_BATCH && r == 1; b++)
            r = read_one(rl, &rl->dir[what]);
        if (r < 0) {
            snprintf(err, errlen, "reading device %c: %s", what ? 'b' : 'a', strerror(errno));
            return -1;
        }
        return 1;
    case EV_TIMER:
        if (read(rl->tfd, &expirations, sizeof(expirations)) > 0) {
            learn_wake(rl, woke);
            rl->armed_ns = 0;
        }
        return 1;
    case EV_SIGNAL: return on_signal(rl, h);
    default:
        if (read(rl->hfd, &expirations, sizeof(expirations)) > 0 && h->keep_going &&
            !h->keep_going(h->ctx, err, errlen))
            return 0;
        return 1;
    }
}

int wanem_relay_run(struct wanem_relay *rl, const struct wanem_hooks *hooks, char *err,
                    size_t errlen)
{
    struct epoll_event evs[5];

    for (;;) {
        release_due(rl);
        arm_timer(rl);
        int n = epoll_wait(rl->ep, evs, 5, -1);
        uint64_t woke = mono_ns();
        if (n < 0 && errno != EINTR) {
            snprintf(err, errlen, "epoll_wait: %s", strerror(errno));
            return -1;
        }
        for (int k = 0; k < n; k++) {
            int r = on_event(rl, hooks, evs[k].data.u32, woke, err, errlen);
            if (r <= 0)
                return r;
        }
    }
}

void wanem_relay_fini(struct wanem_relay *rl)
{
    for (int i = 0; i < 2; i++) {
        struct wanem_dir *d = &rl->dir[i];
        struct wanem_entry *e;
        while ((e = wanem_ring_head(&d->ring))) {
            d->c.discarded_at_exit += e->segs;
            wanem_ring_pop(&d->ring);
        }
        for (uint32_t s = 0; d->pool && s < d->pool_n; s++)
            if (pool_slot(d, s)->len)
                d->c.discarded_at_exit += pool_slot(d, s)->segs;
        d->pool_used = 0;
        wanem_ring_free(&d->ring);
        free(d->pool);
        d->pool = NULL;
    }
    free(rl->scratch);
    rl->scratch = NULL;
    if (rl->ep >= 0)
        close(rl->ep);
    if (rl->tfd >= 0)
        close(rl->tfd);
    if (rl->sigfd >= 0)
        close(rl->sigfd);
    rl->ep = rl->tfd = rl->sigfd = rl->hfd = -1;
}
