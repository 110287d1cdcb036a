/* Unit tests for admit.c, the state the daemon's tests share: admission counters per daemon
 * and per address, the exclusive turn (its queue, its deadline, the stop flag), the routing
 * registry of netrig ids and iperf3 cookies, the UDP turn and the thread count. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "clock.h"
#include "ctl.h"
#include "iperf3_proto.h"

static struct sockaddr_storage addr(const char *a, uint16_t port)
{
    struct sockaddr_storage ss = {0};

    if (strchr(a, ':')) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
        s->sin6_family = AF_INET6;
        s->sin6_port = htons(port);
        assert_int_equal(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
    } else {
        struct sockaddr_in *s = (struct sockaddr_in *)&ss;
        s->sin_family = AF_INET;
        s->sin_port = htons(port);
        assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
    }
    return ss;
}

static int enter(struct admit *a, const char *ip, uint16_t port, uint32_t *running)
{
    struct sockaddr_storage ss = addr(ip, port);
    return admit_enter(a, (struct sockaddr *)&ss, running);
}

static void leave(struct admit *a, const char *ip)
{
    struct sockaddr_storage ss = addr(ip, 1);
    admit_leave(a, (struct sockaddr *)&ss);
}

static void test_max_tests(void **state)
{
    struct admit_limits l = {.max_tests = 2};
    struct admit *a = admit_create(&l);
    uint32_t n;

    (void)state;
    assert_int_equal(enter(a, "10.0.0.1", 1, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(enter(a, "10.0.0.2", 1, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(enter(a, "10.0.0.3", 1, &n), -EBUSY);
    assert_int_equal(n, 2);
    leave(a, "10.0.0.1");
    assert_int_equal(enter(a, "10.0.0.3", 1, &n), 0);
    assert_int_equal(n, 2);
    admit_destroy(a);
}

/* One address, whatever its port, and IPv4-mapped IPv6 counted as the IPv4 address. */
static void test_max_client_tests(void **state)
{
    struct admit_limits l = {.max_tests = 10, .max_client_tests = 2};
    struct admit *a = admit_create(&l);
    uint32_t n;

    (void)state;
    assert_int_equal(enter(a, "192.0.2.7", 1000, &n), 0);
    assert_int_equal(enter(a, "::ffff:192.0.2.7", 2000, &n), 0);
    assert_int_equal(enter(a, "192.0.2.7", 3000, &n), -EUSERS);
    assert_int_equal(n, 2);
    assert_int_equal(enter(a, "2001:db8::7", 1, &n), 0); /* another address is not counted */
    assert_int_equal(n, 3);
    leave(a, "::ffff:192.0.2.7");
    assert_int_equal(enter(a, "192.0.2.7", 4000, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(admit_limits(a)->max_client_tests, 2);
    admit_destroy(a);
}

/* Every per-address slot taken: busy as a whole, even below --max-tests. */
static void test_client_table_full(void **state)
{
    struct admit_limits l = {.max_tests = ADMIT_CLIENTS_MAX + 10};
    struct admit *a = admit_create(&l);
    char ip[32];
    uint32_t n;

    (void)state;
    for (int i = 0; i < ADMIT_CLIENTS_MAX; i++) {
        snprintf(ip, sizeof(ip), "10.1.%d.%d", i / 256, i % 256);
        assert_int_equal(enter(a, ip, 1, &n), 0);
    }
    assert_int_equal(enter(a, "10.9.9.9", 1, &n), -EBUSY);
    assert_int_equal(n, ADMIT_CLIENTS_MAX);
    assert_int_equal(enter(a, "10.1.0.0", 1, &n), 0); /* a known address still counts */
    leave(a, "10.1.0.5");
    assert_int_equal(enter(a, "10.9.9.9", 1, &n), 0);
    admit_destroy(a);
}

struct queued_note {
    int calls;
    uint32_t ahead;
};

static void note_queued(void *ctx, uint32_t ahead)
{
    struct queued_note *q = ctx;
    q->calls++;
    q->ahead = ahead;
}

struct releaser {
    struct admit *a;
    int after_ms;
};

static void *release_later(void *arg)
{
    struct releaser *r = arg;
    struct timespec ts = {.tv_sec = 0, .tv_nsec = r->after_ms * 1000000L};

    nanosleep(&ts, NULL);
    admit_exclusive_release(r->a);
    return NULL;
}

static void test_exclusive(void **state)
{
    struct admit_limits l = {.max_tests = 4};
    struct admit *a = admit_create(&l);
    struct queued_note q = {0};
    _Atomic int stop = 0;
    struct releaser r = {.a = a, .after_ms = 200};
    pthread_t th;
    uint64_t t0;

    (void)state;
    assert_int_equal(admit_exclusive_acquire(a, 1000, &stop, note_queued, &q), 0);
    assert_int_equal(q.calls, 0); /* free: nobody is told to wait */
    /* held: the second waits its deadline out, told once that one test is ahead */
    t0 = clock_mono_ns();
    assert_int_equal(admit_exclusive_acquire(a, 300, &stop, note_queued, &q), -ETIMEDOUT);
    assert_true(clock_mono_ns() - t0 >= 300000000ULL);
    assert_int_equal(q.calls, 1);
    assert_int_equal(q.ahead, 1);
    /* the holder gives it back while the second waits: the second takes it */
    assert_int_equal(pthread_create(&th, NULL, release_later, &r), 0);
    assert_int_equal(admit_exclusive_acquire(a, 5000, &stop, NULL, NULL), 0);
    pthread_join(th, NULL);
    /* the daemon stopping ends a wait well before its deadline */
    stop = 1;
    t0 = clock_mono_ns();
    assert_int_equal(admit_exclusive_acquire(a, 60000, &stop, NULL, NULL), -ETIMEDOUT);
    assert_true(clock_mono_ns() - t0 < 3000000000ULL);
    admit_exclusive_release(a);
    admit_destroy(a);
}

static int pipe_nb(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }

static void test_routing(void **state)
{
    struct admit_limits l = {.max_tests = 4};
    struct admit *a = admit_create(&l);
    uint8_t id[CTL_TEST_ID_LEN], other[CTL_TEST_ID_LEN];
    char cookie[IPERF3_COOKIE_LEN];
    struct admit_conn c;
    int p1[2], p2[2];

    (void)state;
    memset(id, 0x11, sizeof(id));
    memset(other, 0x22, sizeof(other));
    memset(cookie, 'a', sizeof(cookie));
    memcpy(cookie, id, sizeof(id)); /* a cookie that starts like the id is another key */
    assert_int_equal(pipe_nb(p1), 0);
    assert_int_equal(pipe_nb(p2), 0);
    assert_int_equal(admit_register(a, ADMIT_KEY_NETRIG, id, p1[1]), 0);
    assert_int_equal(admit_register(a, ADMIT_KEY_NETRIG, id, p1[1]), -EEXIST);
    assert_int_equal(admit_register(a, ADMIT_KEY_IPERF3, cookie, p2[1]), 0);
    assert_int_equal(admit_route(a, ADMIT_KEY_NETRIG, other, 0, 42), 0);
    assert_int_equal(admit_route(a, ADMIT_KEY_NETRIG, id, 7, 43), 1);
    assert_int_equal(read(p1[0], &c, sizeof(c)), (ssize_t)sizeof(c));
    assert_int_equal(c.flow, 7);
    assert_int_equal(c.fd, 43);
    assert_int_equal(admit_route(a, ADMIT_KEY_IPERF3, cookie, 0, 44), 1);
    assert_int_equal(read(p2[0], &c, sizeof(c)), (ssize_t)sizeof(c));
    assert_int_equal(c.fd, 44);
    /* closed: refused (-1), not unknown (0); removed: unknown */
    admit_close(a, ADMIT_KEY_IPERF3, cookie);
    assert_int_equal(admit_route(a, ADMIT_KEY_IPERF3, cookie, 0, 45), -1);
    admit_unregister(a, ADMIT_KEY_IPERF3, cookie);
    assert_int_equal(admit_route(a, ADMIT_KEY_IPERF3, cookie, 0, 45), 0);
    admit_unregister(a, ADMIT_KEY_NETRIG, id);
    assert_int_equal(admit_route(a, ADMIT_KEY_NETRIG, id, 0, 46), 0);
    for (int i = 0; i < 2; i++) {
        close(p1[i]);
        close(p2[i]);
    }
    admit_destroy(a);
}

/* Each kind has its own cap: a full iperf3 table leaves room for netrig tests. */
static void test_registry_caps(void **state)
{
    struct admit_limits l = {.max_tests = 4};
    struct admit *a = admit_create(&l);
    char cookie[IPERF3_COOKIE_LEN] = {0};
    uint8_t id[CTL_TEST_ID_LEN] = {0};

    (void)state;
    for (uint32_t i = 0; i < ADMIT_IPERF3_MAX; i++) {
        memcpy(cookie, &i, sizeof(i));
        assert_int_equal(admit_register(a, ADMIT_KEY_IPERF3, cookie, -1), 0);
    }
    cookie[10] = 1;
    assert_int_equal(admit_register(a, ADMIT_KEY_IPERF3, cookie, -1), -ENOSPC);
    for (uint32_t i = 0; i < ADMIT_NETRIG_MAX; i++) {
        memcpy(id, &i, sizeof(i));
        assert_int_equal(admit_register(a, ADMIT_KEY_NETRIG, id, -1), 0);
    }
    id[10] = 1;
    assert_int_equal(admit_register(a, ADMIT_KEY_NETRIG, id, -1), -ENOSPC);
    admit_destroy(a);
}

static void test_udp_turn_and_threads(void **state)
{
    struct admit_limits l = {.max_tests = 4};
    struct admit *a = admit_create(&l);
    struct sockaddr_in x = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    const struct sockaddr *px = (const struct sockaddr *)&x;
    uint64_t t0;

    (void)state;
    assert_int_equal(admit_udp_turn_take(a, px, 100), 0);
    t0 = clock_mono_ns();
    assert_int_equal(admit_udp_turn_take(a, px, 200), -EBUSY);
    assert_true(clock_mono_ns() - t0 >= 190000000ULL);
    admit_udp_turn_give(a);
    assert_int_equal(admit_udp_turn_take(a, px, 100), 0);
    admit_udp_turn_give(a);
    assert_int_equal(admit_wait_threads(a, 0), 0);
    admit_thread_started(a);
    admit_thread_started(a);
    admit_thread_done(a);
    assert_int_equal(admit_wait_threads(a, 10), 1);
    admit_thread_done(a);
    assert_int_equal(admit_wait_threads(a, 10), 0);
    admit_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_max_tests),
        cmocka_unit_test(test_max_client_tests),
        cmocka_unit_test(test_client_table_full),
        cmocka_unit_test(test_exclusive),
        cmocka_unit_test(test_routing),
        cmocka_unit_test(test_registry_caps),
        cmocka_unit_test(test_udp_turn_and_threads),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
