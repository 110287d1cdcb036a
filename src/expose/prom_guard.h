/* prom_guard: what one scraper may ask of the HTTP endpoint: /metrics requests per address
 * per second (a token bucket per address, the least recently seen forgotten first; past it
 * 429) and requests per connection (the last one closes it). No locks: one thread asks. */
#ifndef NETRIG_PROM_GUARD_H
#define NETRIG_PROM_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define PROM_GUARD_PER_CONN 16 /* requests one connection may make */
#define PROM_GUARD_RATE     20 /* requests per second one address may make ... */
#define PROM_GUARD_BURST    20 /* ... with this many at once */
#define PROM_GUARD_ADDRS    64 /* addresses remembered */

struct prom_guard_addr {
    uint8_t key[16]; /* IPv4 as IPv4-mapped IPv6 */
    double tokens;
    uint64_t at_ms; /* 0: a free entry */
};

struct prom_guard {
    struct prom_guard_addr addrs[PROM_GUARD_ADDRS];
    uint64_t refused; /* requests answered 429 */
};

/* May a request from sa be served at now_ms (a monotonic clock)? Counts it either way. An
 * address not IPv4/IPv6 (none on a TCP endpoint) is let through. */
bool prom_guard_admit(struct prom_guard *g, const struct sockaddr *sa, uint64_t now_ms);

#endif
