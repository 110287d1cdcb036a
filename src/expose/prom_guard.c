/* prom_guard: per-address request rates for the HTTP endpoint (see prom_guard.h). */
#include "prom_guard.h"

#include <netinet/in.h>
#include <string.h>

static bool key_of(const struct sockaddr *sa, uint8_t key[16])
{
    memset(key, 0, 16);
    if (sa && sa->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return true;
    }
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return true;
    }
    return false;
}

/* The address's entry: its own, else a free one, else the least recently seen (reset). */
static struct prom_guard_addr *entry(struct prom_guard *g, const uint8_t key[16])
{
    struct prom_guard_addr *old = &g->addrs[0];

    for (int i = 0; i < PROM_GUARD_ADDRS; i++) {
        struct prom_guard_addr *a = &g->addrs[i];
        if (a->at_ms && !memcmp(a->key, key, 16))
            return a;
        if (!a->at_ms || (old->at_ms && a->at_ms < old->at_ms))
            old = a;
    }
    memcpy(old->key, key, 16);
    old->tokens = PROM_GUARD_BURST;
    old->at_ms = 0;
    return old;
}

bool prom_guard_admit(struct prom_guard *g, const struct sockaddr *sa, uint64_t now_ms)
{
    uint8_t key[16];
    struct prom_guard_addr *a;

    if (!key_of(sa, key))
        return true;
    a = entry(g, key);
    if (a->at_ms && now_ms > a->at_ms)
        a->tokens += (double)(now_ms - a->at_ms) * PROM_GUARD_RATE / 1000.0;
    if (a->tokens > PROM_GUARD_BURST)
        a->tokens = PROM_GUARD_BURST;
    a->at_ms = now_ms ? now_ms : 1;
    if (a->tokens < 1) {
        g->refused++;
        return false;
    }
    a->tokens -= 1;
    return true;
}
