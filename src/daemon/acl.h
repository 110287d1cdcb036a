/* acl: the daemon's --allow / --deny address lists (CIDR, IPv4 and IPv6). A deny match always
 * refuses; when any allow entry exists, an address must match one of them. */
#ifndef NETRIG_ACL_H
#define NETRIG_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ACL_MAX 64

struct acl_entry {
    int family; /* AF_INET or AF_INET6 */
    uint8_t addr[16];
    uint32_t prefix;
};

struct acl {
    uint32_t nallow, ndeny;
    struct acl_entry allow[ACL_MAX], deny[ACL_MAX];
};

/* Parses "10.0.0.0/8", "2001:db8::/32" or a single address. Returns 0 or -EINVAL. */
int acl_parse(const char *s, struct acl_entry *out);
/* Adds to the allow (deny = false) or deny list; -ENOSPC when full, -EINVAL when unparsable. */
int acl_add(struct acl *a, const char *cidr, bool deny);
/* May this peer connect? IPv4-mapped IPv6 peers are matched as IPv4. */
bool acl_permits(const struct acl *a, const struct sockaddr *peer);

#endif
