/* admit: admission counters, the exclusive and UDP turns, the routing registry and the count
 * of test threads, shared by every test of the daemon. */
#include "admit.h"
#include "clock.h"

#include "ctl.h"
#include "iperf3_proto.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

_Static_assert(IPERF3_COOKIE_LEN <= ADMIT_KEY_MAX && CTL_TEST_ID_LEN <= ADMIT_KEY_MAX,
               "ADMIT_KEY_MAX holds every key");

struct client_count {
    uint8_t key[16];
    uint32_t running;     /* admitted tests */
    uint32_t handshaking; /* connections past their hello, not yet admitted */
    uint32_t fds;         /* descriptors its admitted tests hold */
};

struct auth_fail {
    uint8_t key[33]; /* 'A' and an address (peer_key), or 'U' and a user name's first 32 bytes */
    uint32_t fails;
    uint64_t last_ms; /* 0: a free entry */
};

struct udp_waiter {
    uint8_t key[16];
    uint64_t seq; /* its place in the queue; 0: a free entry */
};

struct udp_grant {
    uint8_t key[16];
    uint64_t at; /* the grant's number (udp_grant_seq); 0: a free entry */
};

struct route {
    bool used, open; /* open: still taking connections */
    uint8_t key[ADMIT_KEY_MAX];
    int pipe_wr;
};

struct admit {
    struct admit_limits l;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* a turn was given back, or a test thread ended */
    uint32_t running;    /* admitted tests */
    uint32_t threads;    /* test threads alive */
    uint64_t ran;        /* tests that started their run and ended */
    uint32_t excl_holders, excl_waiting;
    uint32_t handshakes;     /* connections past their hello, not yet admitted */
    struct admit_usage used; /* what the admitted tests hold */
    bool udp_busy;           /* an iperf3 test is setting up UDP streams on the shared port */
    struct client_count clients[ADMIT_CLIENTS_MAX];
    struct route netrig[ADMIT_NETRIG_MAX];
    struct route iperf3[ADMIT_IPERF3_MAX];
    struct auth_fail auth[ADMIT_AUTH_KEYS];
    /* the iperf3 UDP set-up turn's queue: fair by address (udp_choose) */
    struct udp_waiter udp_waiters[ADMIT_UDP_WAITERS];
    struct udp_grant udp_grants[ADMIT_UDP_WAITERS];
    uint64_t udp_seq, udp_grant_seq, udp_chosen; /* udp_chosen: the waiter's seq, 0 none */
    uint64_t auth_logged_ms, auth_suppressed;    /* the log's rate of auth failures */
};

struct admit *admit_create(const struct admit_limits *l)
{
    struct admit *a = calloc(1, sizeof(*a));

    if (!a)
        return NULL;
    a->l = *l;
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->cond, NULL);
    return a;
}

void admit_destroy(struct admit *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->cond);
    free(a);
}

const struct admit_limits *admit_limits(const struct admit *a) { return &a->l; }

/* ---------------------------------------------------------------- admission */

/* A peer's address as a key (IPv4-mapped IPv6 folded to IPv4), ports ignored. */
static void peer_key(const struct sockaddr *sa, uint8_t key[16])
{
    memset(key, 0, 16);
    if (sa->sa_family == AF_INET) {
        memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        key[10] = key[11] = 0xff;
    } else if (sa->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
}

/* The per-client slot of this peer (creating it with add); NULL when none or full. */
static struct client_count *client_slot(struct admit *a, const uint8_t key[16], bool add)
{
    struct client_count *free_slot = NULL;

    for (int i = 0; i < ADMIT_CLIENTS_MAX; i++) {
        bool used = a->clients[i].running || a->clients[i].handshaking;
        if (used && !memcmp(a->clients[i].key, key, 16))
            return &a->clients[i];
        if (!used && !free_slot)
            free_slot = &a->clients[i];
    }
    if (add && free_slot)
        memcpy(free_slot->key, key, 16);
    return add ? free_slot : NULL;
}

int admit_enter(struct admit *a, const struct sockaddr *peer, uint32_t *running)
{
    struct client_count *cc;
    uint8_t key[16];
    int rc = 0;

    peer_key(peer, key);
    pthread_mutex_lock(&a->lock);
    cc = client_slot(a, key, true);
    if (a->running >= a->l.max_tests || !cc) { /* no per-address slot left: busy as a whole */
        rc = -EBUSY;
        *running = a->running;
    } else if (a->l.max_client_tests && cc->running >= a->l.max_client_tests) {
        rc = -EUSERS;
        *running = cc->running;
    } else {
        a->running++;
        cc->running++;
        *running = a->running;
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

void admit_leave(struct admit *a, const struct sockaddr *peer)
{
    struct client_count *cc;
    uint8_t key[16];

    peer_key(peer, key);
    pthread_mutex_lock(&a->lock);
    a->running--;
    cc = client_slot(a, key, false);
    if (cc)
        cc->running--;
    pthread_mutex_unlock(&a->lock);
}

/* ---------------------------------------------------------------- handshakes */

int admit_handshake_enter(struct admit *a, const struct sockaddr *peer)
{
    struct client_count *cc;
    uint8_t key[16];
    int rc = 0;

    peer_key(peer, key);
    pthread_mutex_lock(&a->lock);
    cc = client_slot(a, key, true);
    if (a->handshakes >= ADMIT_HANDSHAKES_MAX)
        rc = -EBUSY;
    else if (!cc || cc->handshaking >= ADMIT_HANDSHAKES_PER_PEER)
        rc = -EUSERS;
    else {
        a->handshakes++;
        cc->handshaking++;
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

void admit_handshake_leave(struct admit *a, const struct sockaddr *peer)
{
    struct client_count *cc;
    uint8_t key[16];

    peer_key(peer, key);
    pthread_mutex_lock(&a->lock);
    if (a->handshakes)
        a->handshakes--;
    cc = client_slot(a, key, false);
    if (cc && cc->handshaking)
        cc->handshaking--;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

/* ---------------------------------------------------------------- resources */

int admit_charge(struct admit *a, const struct sockaddr *peer, const struct admit_usage *want,
                 struct admit_usage *in_use)
{
    struct client_count *cc;
    uint8_t key[16];
    int rc = 0;

    peer_key(peer, key);
    pthread_mutex_lock(&a->lock);
    cc = client_slot(a, key, false);
    *in_use = a->used;
    if (a->l.max_memory && want->bytes > a->l.max_memory - a->used.bytes) {
        rc = -ENOMEM;
    } else if (a->l.max_fds && want->fds > a->l.max_fds - a->used.fds) {
        rc = -EMFILE;
    } else if (a->l.max_fds && cc && want->fds > admit_fd_share(&a->l) - cc->fds) {
        rc = -EDQUOT;
        in_use->fds = cc->fds;
    } else {
        a->used.bytes += want->bytes;
        a->used.fds += want->fds;
        if (cc)
            cc->fds += want->fds;
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

void admit_uncharge(struct admit *a, const struct sockaddr *peer, const struct admit_usage *held)
{
    struct client_count *cc;
    uint8_t key[16];

    peer_key(peer, key);
    pthread_mutex_lock(&a->lock);
    a->used.bytes -= held->bytes < a->used.bytes ? held->bytes : a->used.bytes;
    a->used.fds -= held->fds < a->used.fds ? held->fds : a->used.fds;
    cc = client_slot(a, key, false);
    if (cc)
        cc->fds -= held->fds < cc->fds ? held->fds : cc->fds;
    pthread_mutex_unlock(&a->lock);
}

uint32_t admit_fd_share(const struct admit_limits *l) { return l->max_fds / ADMIT_FD_SHARE_DIV; }

/* ---------------------------------------------------------------- authentication failures */

static uint64_t now_ms(void) { return clock_mono_ns() / 1000000ULL; }

/* The entry of key (one forgotten, or the oldest, taken for it when add). Under the lock. */
static struct auth_fail *auth_entry(struct admit *a, const uint8_t key[33], uint64_t now, bool add)
{
    struct auth_fail *old = &a->auth[0];

    for (int i = 0; i < ADMIT_AUTH_KEYS; i++) {
        struct auth_fail *f = &a->auth[i];
        if (f->last_ms && now - f->last_ms >= ADMIT_AUTH_FORGET_MS)
            f->last_ms = 0;
        if (f->last_ms && !memcmp(f->key, key, 33))
            return f;
        if (!f->last_ms || (old->last_ms && f->last_ms < old->last_ms))
            old = f;
    }
    if (!add)
        return NULL;
    memcpy(old->key, key, 33);
    old->fails = 0;
    old->last_ms = now;
    return old;
}

static void auth_keys(const struct sockaddr *peer, const char *user, uint8_t ka[33], uint8_t ku[33])
{
    memset(ka, 0, 33);
    memset(ku, 0, 33);
    ka[0] = 'A';
    peer_key(peer, ka + 1);
    ku[0] = 'U';
    strncpy((char *)ku + 1, user ? user : "", 32);
}

static uint32_t auth_delay(uint32_t fails)
{
    uint32_t over = fails > ADMIT_AUTH_FREE ? fails - ADMIT_AUTH_FREE : 0;

    if (!over)
        return 0;
    return over > 8 || (ADMIT_AUTH_BASE_MS << (over - 1)) > ADMIT_AUTH_CAP_MS
               ? ADMIT_AUTH_CAP_MS
               : ADMIT_AUTH_BASE_MS << (over - 1);
}

uint32_t admit_auth_failed(struct admit *a, const struct sockaddr *peer, const char *user,
                           bool *log, uint64_t *suppressed)
{
    uint8_t ka[33], ku[33];
    uint64_t now = now_ms();
    uint32_t da, du;
    struct auth_fail *f;

    auth_keys(peer, user, ka, ku);
    pthread_mutex_lock(&a->lock);
    f = auth_entry(a, ka, now, true);
    f->fails++;
    f->last_ms = now;
    da = auth_delay(f->fails);
    f = auth_entry(a, ku, now, true);
    f->fails++;
    f->last_ms = now;
    du = auth_delay(f->fails);
    *log = !a->auth_logged_ms || now - a->auth_logged_ms >= 1000;
    *suppressed = *log ? a->auth_suppressed : 0;
    if (*log) {
        a->auth_logged_ms = now;
        a->auth_suppressed = 0;
    } else {
        a->auth_suppressed++;
    }
    pthread_mutex_unlock(&a->lock);
    return da > du ? da : du;
}

void admit_auth_ok(struct admit *a, const struct sockaddr *peer, const char *user)
{
    uint8_t ka[33], ku[33];
    uint64_t now = now_ms();
    struct auth_fail *f;

    auth_keys(peer, user, ka, ku);
    pthread_mutex_lock(&a->lock);
    if ((f = auth_entry(a, ka, now, false)))
        f->last_ms = 0;
    if ((f = auth_entry(a, ku, now, false)))
        f->last_ms = 0;
    pthread_mutex_unlock(&a->lock);
}

/* ---------------------------------------------------------------- the turns */

int admit_exclusive_acquire(struct admit *a, int wait_ms, const _Atomic int *stop,
                            void (*queued)(void *ctx, uint32_t ahead), void *ctx)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)wait_ms * 1000000ULL;
    bool told = false;
    int rc = 0;

    pthread_mutex_lock(&a->lock);
    a->excl_waiting++;
    while (a->excl_holders > 0) {
        struct timespec ts;
        if (!told && queued) {
            uint32_t ahead = a->excl_holders + a->excl_waiting - 1;
            pthread_mutex_unlock(&a->lock);
            queued(ctx, ahead);
            pthread_mutex_lock(&a->lock);
            told = true;
            continue;
        }
        if ((stop && *stop) || clock_mono_ns() >= deadline) {
            rc = -ETIMEDOUT;
            break;
        }
        ts = clock_deadline_ts(CLOCK_REALTIME, 1000);
        pthread_cond_timedwait(&a->cond, &a->lock, &ts);
    }
    a->excl_waiting--;
    if (!rc)
        a->excl_holders++;
    pthread_mutex_unlock(&a->lock);
    return rc;
}

void admit_exclusive_release(struct admit *a)
{
    pthread_mutex_lock(&a->lock);
    a->excl_holders--;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

/* The next holder of the UDP turn: the waiter whose address had it least recently (never:
 * first), the earliest of those. Under the lock. */
static void udp_choose(struct admit *a)
{
    struct udp_waiter *best = NULL;
    uint64_t best_at = 0;

    a->udp_chosen = 0;
    for (int i = 0; i < ADMIT_UDP_WAITERS; i++) {
        struct udp_waiter *w = &a->udp_waiters[i];
        uint64_t at = 0;
        if (!w->seq)
            continue;
        for (int k = 0; k < ADMIT_UDP_WAITERS; k++)
            if (a->udp_grants[k].at && !memcmp(a->udp_grants[k].key, w->key, 16))
                at = a->udp_grants[k].at;
        if (!best || at < best_at || (at == best_at && w->seq < best->seq)) {
            best = w;
            best_at = at;
        }
    }
    if (best)
        a->udp_chosen = best->seq;
}

/* The turn goes to key: remembered as its address's last (the oldest record forgotten). */
static void udp_granted(struct admit *a, const uint8_t key[16])
{
    struct udp_grant *g = &a->udp_grants[0];

    a->udp_busy = true;
    a->udp_grant_seq++;
    for (int k = 0; k < ADMIT_UDP_WAITERS; k++) {
        if (a->udp_grants[k].at && !memcmp(a->udp_grants[k].key, key, 16)) {
            g = &a->udp_grants[k];
            break;
        }
        if (a->udp_grants[k].at < g->at)
            g = &a->udp_grants[k];
    }
    memcpy(g->key, key, 16);
    g->at = a->udp_grant_seq;
}

/* A fair turn comes after every other address waiting has had one: the wait is wait_ms once
 * per other address ahead (and once for the holder), at most ADMIT_UDP_WAIT_TURNS of them. */
static void udp_wait_longer(const struct admit *a, const struct udp_waiter *me, struct timespec *ts,
                            int wait_ms)
{
    uint32_t others = 0;

    for (int i = 0; i < ADMIT_UDP_WAITERS; i++) {
        const struct udp_waiter *w = &a->udp_waiters[i];
        bool seen = false;
        if (!w->seq || w == me || !memcmp(w->key, me->key, 16))
            continue;
        for (int k = 0; k < i && !seen; k++)
            seen = a->udp_waiters[k].seq && a->udp_waiters[k].seq != me->seq &&
                   !memcmp(a->udp_waiters[k].key, w->key, 16);
        others += !seen;
    }
    if (others > ADMIT_UDP_WAIT_TURNS - 1)
        others = ADMIT_UDP_WAIT_TURNS - 1;
    ts->tv_sec += (time_t)((uint64_t)others * (uint64_t)wait_ms / 1000);
    ts->tv_nsec += (long)((uint64_t)others * (uint64_t)wait_ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int admit_udp_turn_take(struct admit *a, const struct sockaddr *peer, int wait_ms)
{
    struct udp_waiter *me = NULL;
    uint64_t mine;
    struct timespec ts;
    uint8_t key[16];
    int rc = 0;

    peer_key(peer, key);
    ts = clock_deadline_ts(CLOCK_REALTIME, wait_ms);
    pthread_mutex_lock(&a->lock);
    if (!a->udp_busy && !a->udp_chosen) {
        udp_granted(a, key);
        pthread_mutex_unlock(&a->lock);
        return 0;
    }
    for (int i = 0; i < ADMIT_UDP_WAITERS && !me; i++)
        if (!a->udp_waiters[i].seq)
            me = &a->udp_waiters[i];
    if (!me) {
        pthread_mutex_unlock(&a->lock);
        return -EBUSY;
    }
    memcpy(me->key, key, 16);
    me->seq = ++a->udp_seq;
    udp_wait_longer(a, me, &ts, wait_ms);
    if (!a->udp_busy && !a->udp_chosen)
        udp_choose(a);
    while (!(!a->udp_busy && a->udp_chosen == me->seq) && rc == 0)
        rc = pthread_cond_timedwait(&a->cond, &a->lock, &ts);
    mine = me->seq;
    me->seq = 0;
    if (!a->udp_busy && a->udp_chosen == mine) {
        rc = 0;
        udp_granted(a, key);
        a->udp_chosen = 0; /* the next is chosen when the turn is given back */
    } else if (a->udp_chosen == mine) {
        udp_choose(a); /* gave up while chosen: the next one */
    }
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
    return rc ? -EBUSY : 0;
}

void admit_udp_turn_give(struct admit *a)
{
    pthread_mutex_lock(&a->lock);
    a->udp_busy = false;
    udp_choose(a);
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

/* ---------------------------------------------------------------- routing */

struct table {
    struct route *r;
    int cap;
    size_t len; /* of a key */
};

size_t admit_key_len(enum admit_key kind)
{
    return kind == ADMIT_KEY_IPERF3 ? IPERF3_COOKIE_LEN : CTL_TEST_ID_LEN;
}

static struct table table_of(struct admit *a, enum admit_key kind)
{
    if (kind == ADMIT_KEY_IPERF3)
        return (struct table){a->iperf3, ADMIT_IPERF3_MAX, admit_key_len(kind)};
    return (struct table){a->netrig, ADMIT_NETRIG_MAX, admit_key_len(kind)};
}

static struct route *route_find(struct table t, const void *key)
{
    for (int i = 0; i < t.cap; i++)
        if (t.r[i].used && !memcmp(t.r[i].key, key, t.len))
            return &t.r[i];
    return NULL;
}

int admit_register(struct admit *a, enum admit_key kind, const void *key, int pipe_wr)
{
    struct table t = table_of(a, kind);
    int rc = -ENOSPC;

    pthread_mutex_lock(&a->lock);
    if (route_find(t, key))
        rc = -EEXIST;
    for (int i = 0; rc == -ENOSPC && i < t.cap; i++) {
        if (t.r[i].used)
            continue;
        t.r[i] = (struct route){.used = true, .open = true, .pipe_wr = pipe_wr};
        memcpy(t.r[i].key, key, t.len);
        rc = 0;
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

static void route_set(struct admit *a, enum admit_key kind, const void *key, bool remove)
{
    struct route *r;

    pthread_mutex_lock(&a->lock);
    r = route_find(table_of(a, kind), key);
    if (r && remove)
        r->used = false;
    else if (r)
        r->open = false;
    pthread_mutex_unlock(&a->lock);
}

void admit_close(struct admit *a, enum admit_key kind, const void *key)
{
    route_set(a, kind, key, false);
}

void admit_unregister(struct admit *a, enum admit_key kind, const void *key)
{
    route_set(a, kind, key, true);
}

int admit_registered(struct admit *a, enum admit_key kind, const void *key)
{
    struct route *r;
    int rc;

    pthread_mutex_lock(&a->lock);
    r = route_find(table_of(a, kind), key);
    rc = !r ? 0 : r->open ? 1 : -1;
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int admit_route(struct admit *a, enum admit_key kind, const void *key, uint32_t flow, int fd)
{
    struct admit_conn c = {.flow = flow, .fd = fd};
    struct route *r;
    int rc = 0;

    pthread_mutex_lock(&a->lock);
    r = route_find(table_of(a, kind), key);
    if (r && !r->open)
        rc = -1;
    else if (r)
        rc = write(r->pipe_wr, &c, sizeof(c)) == (ssize_t)sizeof(c) ? 1 : -1;
    pthread_mutex_unlock(&a->lock);
    return rc;
}

/* ---------------------------------------------------------------- test threads */

void admit_thread_started(struct admit *a)
{
    pthread_mutex_lock(&a->lock);
    a->threads++;
    pthread_mutex_unlock(&a->lock);
}

void admit_thread_done(struct admit *a)
{
    pthread_mutex_lock(&a->lock);
    a->threads--;
    pthread_cond_broadcast(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

uint32_t admit_wait_threads(struct admit *a, int wait_ms)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)wait_ms * 1000000ULL;
    uint32_t left;

    pthread_mutex_lock(&a->lock);
    while (a->threads > 0 && clock_mono_ns() < deadline) {
        struct timespec ts = clock_deadline_ts(CLOCK_REALTIME, 1000);
        pthread_cond_timedwait(&a->cond, &a->lock, &ts);
    }
    left = a->threads;
    pthread_mutex_unlock(&a->lock);
    return left;
}

uint32_t admit_threads_alive(struct admit *a)
{
    uint32_t n;

    pthread_mutex_lock(&a->lock);
    n = a->threads;
    pthread_mutex_unlock(&a->lock);
    return n;
}

void admit_test_ran(struct admit *a)
{
    pthread_mutex_lock(&a->lock);
    a->ran++;
    pthread_mutex_unlock(&a->lock);
}

uint64_t admit_tests_ran(struct admit *a)
{
    uint64_t n;

    pthread_mutex_lock(&a->lock);
    n = a->ran;
    pthread_mutex_unlock(&a->lock);
    return n;
}
