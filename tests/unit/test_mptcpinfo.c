/* Unit tests for mptcpinfo.c: the kernel's MPTCP structures parsed from fixed buffers (a 6.18
 * struct mptcp_info, a 6.1 one without byte counters, a fallen-back connection, two subflows'
 * TCP_INFO and addresses, hostile headers), addresses as text both ways, and one live MPTCP
 * connection on loopback whose counters must match what was written (skipped without MPTCP). */
#define _GNU_SOURCE
#include "test_util.h"

#include "mptcpinfo.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct hdr {
    uint32_t size_subflow_data, num_subflows, size_kernel, size_user;
};

static void put32(uint8_t *b, size_t off, uint32_t v) { memcpy(b + off, &v, sizeof(v)); }
static void put64(uint8_t *b, size_t off, uint64_t v) { memcpy(b + off, &v, sizeof(v)); }

static void test_info(void **state)
{
    uint8_t b[96];
    struct mptcpinfo m;
    (void)state;

    memset(b, 0, sizeof(b));
    b[0] = 1;              /* one additional subflow */
    put32(b, 44, 7);       /* retransmits */
    put64(b, 48, 14480);   /* bytes_retrans */
    put64(b, 56, 5000000); /* bytes_sent */
    put64(b, 64, 1234);    /* bytes_received */
    put64(b, 72, 4990000); /* bytes_acked */
    memset(&m, 0, sizeof(m));
    assert_int_equal(mptcpinfo_parse_info(b, sizeof(b), &m), 0);
    assert_true(m.valid);
    assert_false(m.fallback);
    assert_int_equal(m.retransmits, 7);
    assert_int_equal(m.bytes_retrans, 14480);
    assert_int_equal(m.bytes_sent, 5000000);
    assert_int_equal(m.bytes_received, 1234);
    assert_int_equal(m.bytes_acked, 4990000);
    /* a 6.1 kernel's struct ends at byte 43: no byte counters, they stay 0 */
    memset(&m, 0, sizeof(m));
    assert_int_equal(mptcpinfo_parse_info(b, 43, &m), 0);
    assert_true(m.valid);
    assert_false(m.fallback);
    assert_int_equal(m.bytes_sent, 0);
    assert_int_equal(m.retransmits, 0);
    /* the fallback flag, and a connection that answers with nothing */
    put32(b, 8, 1);
    assert_int_equal(mptcpinfo_parse_info(b, sizeof(b), &m), 0);
    assert_true(m.fallback);
    assert_int_equal(mptcpinfo_parse_info(b, 0, &m), 0);
    assert_true(m.fallback);
}

static void test_tcpinfo(void **state)
{
    struct {
        struct hdr h;
        struct tcp_info t[2];
    } buf;
    struct mptcpinfo m;
    (void)state;

    memset(&buf, 0, sizeof(buf));
    buf.h = (struct hdr){sizeof(buf.h), 2, sizeof(struct tcp_info), sizeof(struct tcp_info)};
    buf.t[0].tcpi_bytes_sent = 6000000;
    buf.t[0].tcpi_bytes_acked = 5900000;
    buf.t[0].tcpi_total_retrans = 3;
    buf.t[0].tcpi_rtt = 1500;
    buf.t[1].tcpi_bytes_sent = 12000000;
    buf.t[1].tcpi_bytes_received = 77;
    buf.t[1].tcpi_rtt = 900;
    memset(&m, 0, sizeof(m));
    assert_int_equal(mptcpinfo_parse_tcpinfo(&buf, sizeof(buf), &m), 0);
    assert_int_equal(m.subflows, 2);
    assert_int_equal(m.nsub, 2);
    assert_int_equal(m.sub[0].bytes_sent, 6000000);
    assert_int_equal(m.sub[0].bytes_acked, 5900000);
    assert_int_equal(m.sub[0].retransmits, 3);
    assert_int_equal(m.sub[0].rtt_us, 1500);
    assert_int_equal(m.sub[1].bytes_sent, 12000000);
    assert_int_equal(m.sub[1].bytes_received, 77);
    assert_int_equal(m.sub[1].rtt_us, 900);
    /* the kernel has three but the buffer held two: two read, three counted */
    buf.h.num_subflows = 3;
    assert_int_equal(mptcpinfo_parse_tcpinfo(&buf, sizeof(buf), &m), 0);
    assert_int_equal(m.subflows, 3);
    assert_int_equal(m.nsub, 2);
    /* an element shorter than any struct tcp_info, a header longer than the buffer, no
     * element size: refused */
    buf.h.size_user = 8;
    assert_int_equal(mptcpinfo_parse_tcpinfo(&buf, sizeof(buf), &m), -EINVAL);
    buf.h.size_user = 0;
    assert_int_equal(mptcpinfo_parse_tcpinfo(&buf, sizeof(buf), &m), -EINVAL);
    buf.h.size_user = sizeof(struct tcp_info);
    buf.h.size_subflow_data = sizeof(buf) + 1;
    assert_int_equal(mptcpinfo_parse_tcpinfo(&buf, sizeof(buf), &m), -EINVAL);
    assert_int_equal(mptcpinfo_parse_tcpinfo(&buf, 8, &m), -EINVAL);
    /* no subflows at all */
    buf.h.size_subflow_data = sizeof(buf.h);
    buf.h.num_subflows = 0;
    assert_int_equal(mptcpinfo_parse_tcpinfo(&buf, sizeof(buf.h), &m), 0);
    assert_int_equal(m.nsub, 0);
    /* a huge count is held to what fits and to MPTCPINFO_MAX_SUB */
    buf.h.num_subflows = 1000;
    assert_int_equal(mptcpinfo_parse_tcpinfo(&buf, sizeof(buf), &m), 0);
    assert_int_equal(m.subflows, 1000);
    assert_int_equal(m.nsub, 2);
}

static void test_addrs(void **state)
{
    struct {
        struct hdr h;
        uint8_t e[2][256];
    } buf;
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(40000)};
    struct sockaddr_in b4 = {.sin_family = AF_INET, .sin_port = htons(5301)};
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(40001)};
    struct sockaddr_in6 b6 = {.sin6_family = AF_INET6, .sin6_port = htons(5301)};
    struct mptcpinfo m;
    char s[64];
    (void)state;

    inet_pton(AF_INET, "10.0.1.1", &a4.sin_addr);
    inet_pton(AF_INET, "10.0.1.2", &b4.sin_addr);
    inet_pton(AF_INET6, "fd00:2::1", &a6.sin6_addr);
    inet_pton(AF_INET6, "fd00:2::2", &b6.sin6_addr);
    memset(&buf, 0, sizeof(buf));
    buf.h = (struct hdr){sizeof(buf.h), 2, 256, 256};
    memcpy(buf.e[0], &a4, sizeof(a4));
    memcpy(buf.e[0] + 128, &b4, sizeof(b4));
    memcpy(buf.e[1], &a6, sizeof(a6));
    memcpy(buf.e[1] + 128, &b6, sizeof(b6));
    memset(&m, 0, sizeof(m));
    m.nsub = 2;
    assert_int_equal(mptcpinfo_parse_addrs(&buf, sizeof(buf), &m), 0);
    mptcpinfo_addr_str(&m.sub[0].local, s, sizeof(s));
    assert_string_equal(s, "10.0.1.1:40000");
    mptcpinfo_addr_str(&m.sub[0].remote, s, sizeof(s));
    assert_string_equal(s, "10.0.1.2:5301");
    mptcpinfo_addr_str(&m.sub[1].local, s, sizeof(s));
    assert_string_equal(s, "[fd00:2::1]:40001");
    mptcpinfo_addr_str(&m.sub[1].remote, s, sizeof(s));
    assert_string_equal(s, "[fd00:2::2]:5301");
    /* only as many as the subflows read from MPTCP_TCPINFO */
    memset(&m, 0, sizeof(m));
    m.nsub = 1;
    assert_int_equal(mptcpinfo_parse_addrs(&buf, sizeof(buf), &m), 0);
    assert_int_equal(m.sub[1].local.family, 0);
    /* an element too short for two addresses */
    buf.h.size_user = 128;
    assert_int_equal(mptcpinfo_parse_addrs(&buf, sizeof(buf), &m), -EINVAL);
}

static void test_addr_text(void **state)
{
    struct mptcpinfo_addr a;
    char s[64];
    (void)state;

    assert_int_equal(mptcpinfo_addr_parse("10.0.2.1:5301", &a), 0);
    assert_int_equal(a.family, 4);
    assert_int_equal(a.port, 5301);
    mptcpinfo_addr_str(&a, s, sizeof(s));
    assert_string_equal(s, "10.0.2.1:5301");
    assert_int_equal(mptcpinfo_addr_parse("[::1]:0", &a), 0);
    assert_int_equal(a.family, 6);
    assert_int_equal(mptcpinfo_addr_parse("?", &a), 0);
    assert_int_equal(a.family, 0);
    mptcpinfo_addr_str(&a, s, sizeof(s));
    assert_string_equal(s, "?");
    assert_int_equal(mptcpinfo_addr_parse("10.0.2.1", &a), -EINVAL);
    assert_int_equal(mptcpinfo_addr_parse("10.0.2.1:70000", &a), -EINVAL);
    assert_int_equal(mptcpinfo_addr_parse("10.0.2.1:", &a), -EINVAL);
    assert_int_equal(mptcpinfo_addr_parse("[::1:80", &a), -EINVAL);
    assert_int_equal(mptcpinfo_addr_parse("host:80", &a), -EINVAL);
    assert_int_equal(mptcpinfo_addr_parse(":80", &a), -EINVAL);
}

/* One MPTCP connection on loopback: 1 MB written, the counters read back against it, so the
 * offsets above match the running kernel. */
static void test_live(void **state)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    static char data[1 << 20];
    char err[256], s[64], want[64];
    struct mptcpinfo m;
    int l, c, a;
    size_t got = 0;
    (void)state;

    if (mptcpinfo_check(NULL, err, sizeof(err))) {
        print_message("skipped (no MPTCP here: %s)\n", err);
        skip();
    }
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    l = socket(AF_INET, SOCK_STREAM, mptcpinfo_proto());
    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &sl), 0);
    c = socket(AF_INET, SOCK_STREAM, mptcpinfo_proto());
    assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
    a = accept(l, NULL, NULL);
    assert_true(a >= 0);
    assert_true(mptcpinfo_is_mptcp(c));
    assert_true(mptcpinfo_is_mptcp(a));
    assert_int_equal(write(c, data, sizeof(data)), (ssize_t)sizeof(data));
    while (got < sizeof(data)) {
        ssize_t n = read(a, data, sizeof(data) - got);
        assert_true(n > 0);
        got += (size_t)n;
    }
    /* the last acknowledgements may still be on their way: at most a second */
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(mptcpinfo_read(c, &m), 0);
        if (m.bytes_acked == sizeof(data))
            break;
        usleep(1000);
    }
    assert_true(m.valid);
    assert_false(m.fallback);
    assert_int_equal(m.subflows, 1);
    assert_int_equal(m.nsub, 1);
    assert_int_equal(m.bytes_sent, sizeof(data));
    assert_int_equal(m.bytes_acked, sizeof(data));
    assert_true(m.sub[0].bytes_sent >= sizeof(data));
    assert_true(m.sub[0].bytes_acked >= sizeof(data));
    snprintf(want, sizeof(want), "127.0.0.1:%u", ntohs(sa.sin_port));
    mptcpinfo_addr_str(&m.sub[0].remote, s, sizeof(s));
    assert_string_equal(s, want);
    assert_int_equal(mptcpinfo_read(a, &m), 0);
    assert_int_equal(m.bytes_received, sizeof(data));
    assert_true(m.sub[0].bytes_received >= sizeof(data));
    mptcpinfo_addr_str(&m.sub[0].local, s, sizeof(s));
    assert_string_equal(s, want);
    close(a);
    close(c);
    /* a plain TCP socket is not MPTCP and has no MPTCP figures */
    c = socket(AF_INET, SOCK_STREAM, 0);
    assert_false(mptcpinfo_is_mptcp(c));
    assert_int_not_equal(mptcpinfo_read(c, &m), 0);
    assert_false(m.valid);
    close(c);
    close(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info),  cmocka_unit_test(test_tcpinfo),
        cmocka_unit_test(test_addrs), cmocka_unit_test(test_addr_text),
        cmocka_unit_test(test_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
