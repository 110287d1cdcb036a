/* load_icmp: the ICMP echo probe's loop. */
#define _GNU_SOURCE
#include "load_icmp.h"

#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LATE_NS 1000000ULL

int load_icmp_open(struct load_icmp *li, const struct sockaddr *peer, socklen_t len, char *err,
                   size_t errlen)
{
    memset(&li->log, 0, sizeof(li->log));
    return pingsock_open(&li->ps, peer, len, err, errlen);
}

void load_icmp_fini(struct load_icmp *li)
{
    pingsock_close(&li->ps);
    txnlog_fini(&li->log);
}

/* Replies waiting: each fills the latency of its request (sequence numbers wrap at 65536; at
 * most that many are in flight, given the 2 s timeout and the rate limit). */
static void take_replies(struct load_icmp *li, const uint64_t *sent_real, int64_t real_off)
{
    uint16_t seq;
    uint64_t at;
    int rc;

    while ((rc = pingsock_recv(&li->ps, &seq, &at)) != 0) {
        if (rc < 0)
            return;
        /* the request of this number most recently sent */
        uint64_t base = li->sent ? li->sent - 1 : 0, back = (uint16_t)((uint16_t)base - seq);
        if (back >= li->sent)
            continue;
        uint64_t i = base - back;
        struct txnlog_rec *r = &li->log.rec[i];
        if (i >= li->log.n || r->lat_ns != TXNLOG_LOST || at < sent_real[i])
            continue;
        if (at - sent_real[i] <= LOAD_ICMP_TIMEOUT_NS)
            r->lat_ns = at - sent_real[i];
    }
    (void)real_off;
}

static int run(struct load_icmp *li)
{
    uint64_t n = li->rate * li->duration_ns / 1000000000ULL + 1, period = 1000000000ULL / li->rate;
    uint64_t *sent_real, next, end;
    int64_t real_off;

    if (n > TXNLOG_MAX_CAP)
        n = TXNLOG_MAX_CAP;
    if (txnlog_init(&li->log, (uint32_t)n))
        return -ENOMEM;
    sent_real = calloc(n, sizeof(*sent_real));
    if (!sent_real)
        return -ENOMEM;
    while (!atomic_load(li->stop) && clock_real_ns() < li->start_at) {
        struct pollfd pf = {.fd = li->ps.fd, .events = 0};
        uint64_t left = li->start_at - clock_real_ns();
        poll(&pf, 0, (int)(left / 1000000ULL > 50 ? 50 : left / 1000000ULL));
    }
    real_off = (int64_t)clock_real_ns() - (int64_t)clock_mono_ns();
    li->start_mono_ns = clock_mono_ns();
    next = li->start_mono_ns;
    end = li->start_mono_ns + li->duration_ns;
    while (!atomic_load(li->stop)) {
        uint64_t now = clock_mono_ns();
        if (atomic_load(&li->finish) && end > now)
            end = now;
        if (now >= end + LOAD_ICMP_TIMEOUT_NS)
            break;
        while (now >= next && next < end && li->sent < n) {
            li->late += now - next > LATE_NS;
            sent_real[li->sent] = (uint64_t)((int64_t)now + real_off);
            txnlog_add(&li->log, now - li->start_mono_ns, TXNLOG_LOST);
            li->sent++;
            int rc = pingsock_send(&li->ps, (uint16_t)(li->sent - 1));
            if (rc) {
                snprintf(li->err, sizeof(li->err), "ICMP echo: %s", strerror(-rc));
                free(sent_real);
                return rc;
            }
            next += period;
        }
        struct pollfd pf = {.fd = li->ps.fd, .events = POLLIN};
        uint64_t wait = next < end ? (next > now ? next - now : 0) : 50000000ULL;
        poll(&pf, 1, (int)((wait + 999999) / 1000000ULL));
        take_replies(li, sent_real, real_off);
        if (next >= end && li->sent) { /* all sent: stop once every one is answered */
            bool open = false;
            for (uint64_t i = li->sent; i-- > 0 && !open;)
                open = li->log.rec[i].lat_ns == TXNLOG_LOST &&
                       clock_mono_ns() - li->start_mono_ns - li->log.rec[i].t_ns <
                           LOAD_ICMP_TIMEOUT_NS;
            if (!open)
                break;
        }
    }
    free(sent_real);
    return 0;
}

void *load_icmp_main(void *arg)
{
    struct load_icmp *li = arg;

    li->rc = li->rate ? run(li) : 0;
    return NULL;
}
