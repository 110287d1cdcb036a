/* load_icmp: netrig load's ICMP echo probe, beside the UDP and TCP ones: open-loop echo requests
 * at the probe rate to the daemon's host over the probes' whole span, every one's send time and
 * latency (to the kernel's receive time of its reply) kept in a txnlog. No daemon takes part. */
#ifndef NETRIG_LOAD_ICMP_H
#define NETRIG_LOAD_ICMP_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "pingsock.h"
#include "txnlog.h"

#define LOAD_ICMP_TIMEOUT_NS (2ULL * 1000000000ULL) /* a reply later than this counts lost */

struct load_icmp {
    struct pingsock ps;
    uint64_t rate;        /* requests a second */
    uint64_t start_at;    /* CLOCK_REALTIME: the first request then */
    uint64_t duration_ns; /* requests go out this long at most (or until finish) */
    _Atomic int *stop;    /* stop at once */
    /* raised when the daemon's probes have ended: send no more, wait for the replies due */
    atomic_bool finish;
    /* results */
    struct txnlog log;      /* t_ns since start_mono_ns */
    uint64_t start_mono_ns; /* CLOCK_MONOTONIC at the first request */
    uint64_t sent, late;    /* late: left over 1 ms after their time */
    int rc;
    char err[256];
};

/* Opens the socket toward the host of peer: 0, or -errno with err saying why (load_icmp.h's
 * pingsock_open). */
int load_icmp_open(struct load_icmp *li, const struct sockaddr *peer, socklen_t len, char *err,
                   size_t errlen);
/* The probe's thread: pthread_create(..., load_icmp_main, li). */
void *load_icmp_main(void *arg);
void load_icmp_fini(struct load_icmp *li);

#endif
