/* Unit tests for the path-MTU probe (pmtu.c) on loopback in a private network namespace of a
 * child process (root only): the route's interface, an echo of the asked size comes back for
 * IPv4 and IPv6, a size the interface cannot send is told apart, and bad sizes and hosts are
 * refused. Routers and silent hops are tune_safety.sh's (namespaces joined by veth). */
#define _GNU_SOURCE
#include "test_util.h"

#include "pmtu.h"

#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int set_lo(int mtu)
{
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM, 0), rc;

    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    rc = fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr);
    ifr.ifr_flags |= IFF_UP;
    rc = rc || ioctl(fd, SIOCSIFFLAGS, &ifr);
    ifr.ifr_mtu = mtu;
    rc = rc || ioctl(fd, SIOCSIFMTU, &ifr);
    if (fd >= 0)
        close(fd);
    return rc;
}

static int probe_child(void)
{
    struct pmtu_peer p;
    struct pmtu_result r;
    char ifname[IF_NAMESIZE], err[256];
    unsigned mtu = 0;

    if (unshare(CLONE_NEWNET))
        return 10;
    if (set_lo(9000))
        return 11;
    if (pmtu_resolve("127.0.0.1", &p, err, sizeof(err)) ||
        pmtu_route(&p, ifname, &mtu, err, sizeof(err)) || strcmp(ifname, "lo") || mtu != 9000)
        return 12;
    if (pmtu_probe(&p, 9000, 2000, 100, &r, err, sizeof(err)) || r.verdict != PMTU_CARRIED ||
        r.sent < 1)
        return 13;
    /* larger than lo's MTU: this host cannot send it, with DF */
    if (pmtu_probe(&p, 9001, 1000, 100, &r, err, sizeof(err)) || r.verdict != PMTU_LOCAL)
        return 14;
    if (pmtu_resolve("::1", &p, err, sizeof(err)) ||
        pmtu_probe(&p, 1400, 2000, 100, &r, err, sizeof(err)) || r.verdict != PMTU_CARRIED)
        return 15;
    if (pmtu_probe(&p, 20, 1000, 100, &r, err, sizeof(err)) != -1 || !strstr(err, "cannot be"))
        return 16;
    return 0;
}

static void test_probe_loopback(void **state)
{
    int status = -1;
    pid_t pid;
    (void)state;

    if (geteuid() != 0)
        skip();
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(probe_child());
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 10)
        skip(); /* no network namespaces here */
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_resolve(void **state)
{
    struct pmtu_peer p;
    char err[256];
    (void)state;

    assert_int_equal(pmtu_resolve("", &p, err, sizeof(err)), -1);
    assert_contains(err, "is not a host name or address");
    assert_int_equal(pmtu_resolve("10.1.2.3", &p, err, sizeof(err)), 0);
    assert_string_equal(p.addr, "10.1.2.3");
    assert_int_equal(p.family, AF_INET);
    assert_int_equal(pmtu_min_size(AF_INET), 44);
    assert_int_equal(pmtu_min_size(AF_INET6), 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_probe_loopback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
