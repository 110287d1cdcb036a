/* acl: CIDR matching for the daemon's address lists. */
#include "acl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int acl_parse(const char *s, struct acl_entry *out)
{
    char buf[64], *slash, *end;
    long prefix;

    if (!s || snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
        return -EINVAL;
    slash = strchr(buf, '/');
    if (slash)
        *slash = '\0';
    memset(out, 0, sizeof(*out));
    if (inet_pton(AF_INET, buf, out->addr) == 1)
        out->family = AF_INET;
    else if (inet_pton(AF_INET6, buf, out->addr) == 1)
        out->family = AF_INET6;
    else
        return -EINVAL;
    out->prefix = out->family == AF_INET ? 32 : 128;
    if (slash) {
        if (!slash[1])
            return -EINVAL;
        prefix = strtol(slash + 1, &end, 10);
        if (*end || prefix < 0 || prefix > (long)out->prefix)
            return -EINVAL;
        out->prefix = (uint32_t)prefix;
    }
    return 0;
}

int acl_add(struct acl *a, const char *cidr, bool deny)
{
    struct acl_entry e;
    uint32_t *n = deny ? &a->ndeny : &a->nallow;

    if (acl_parse(cidr, &e))
        return -EINVAL;
    if (*n >= ACL_MAX)
        return -ENOSPC;
    (deny ? a->deny : a->allow)[(*n)++] = e;
    return 0;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, uint32_t bits)
{
    uint32_t bytes = bits / 8, rest = bits % 8;

    if (memcmp(a, b, bytes))
        return false;
    if (!rest)
        return true;
    return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool matches(const struct acl_entry *list, uint32_t n, int family, const uint8_t *addr)
{
    for (uint32_t i = 0; i < n; i++)
        if (list[i].family == family && prefix_match(list[i].addr, addr, list[i].prefix))
            return true;
    return false;
}

bool acl_permits(const struct acl *a, const struct sockaddr *peer)
{
    uint8_t addr[16];
    int family = peer->sa_family;

    if (family == AF_INET) {
        memcpy(addr, &((const struct sockaddr_in *)peer)->sin_addr, 4);
    } else if (family == AF_INET6) {
        const struct in6_addr *s6 = &((const struct sockaddr_in6 *)peer)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(s6)) {
            family = AF_INET;
            memcpy(addr, &s6->s6_addr[12], 4);
        } else {
            memcpy(addr, s6, 16);
        }
    } else {
        return false;
    }
    if (matches(a->deny, a->ndeny, family, addr))
        return false;
    return a->nallow == 0 || matches(a->allow, a->nallow, family, addr);
}
