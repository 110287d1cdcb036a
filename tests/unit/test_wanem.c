/* The WAN emulator's pure parts (tests/tools/wanem_*.c): super-packets parsed and cut into
 * runs of segments exactly as the kernel's own segmentation would cut them (lengths, IDs,
 * sequence numbers, flags, checksums that verify), loss drawn per segment with exact counts,
 * and the byte ring keeping every packet intact and in order through wraps and limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wanem.h"

#include <linux/virtio_net.h>

#define MSS 1448

static uint16_t rd16be(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t rd32be(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void wr16be(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void wr16le(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* the pseudo-header sum of an IP packet's transport part of l4len bytes */
static uint32_t pseudo(const uint8_t *ip, uint8_t proto, size_t l4len)
{
    uint32_t s = ip[0] >> 4 == 4 ? wanem_csum_add(0, ip + 12, 8) : wanem_csum_add(0, ip + 8, 32);

    return s + proto + (uint32_t)l4len;
}

/* A super-packet as a TUN device with TSO hands it over: vnet header (NEEDS_CSUM, gso type
 * and size, csum_start/offset), one IP header (v4 with ID and checksum, or v6), one TCP (20 +
 * 12 bytes of options) or UDP header, the checksum field holding the folded pseudo-header sum
 * over the whole length, then payload bytes i & 0xff... Returns the unit length. */
static size_t make_unit(uint8_t *u, int ipver, bool tcp, uint32_t payload, uint16_t gso,
                        uint8_t flags)
{
    size_t l3 = ipver == 4 ? 20 : 40, l4 = tcp ? 32 : 8, hdr = l3 + l4;
    size_t iplen = hdr + payload;
    uint8_t *ip = u + WANEM_VNET_LEN, *th = ip + l3;

    memset(u, 0, WANEM_VNET_LEN + hdr);
    u[0] = VIRTIO_NET_HDR_F_NEEDS_CSUM;
    u[1] = tcp ? (ipver == 4 ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_TCPV6)
               : VIRTIO_NET_HDR_GSO_UDP_L4;
    wr16le(u + 2, (uint16_t)hdr);
    wr16le(u + 4, gso);
    wr16le(u + 6, (uint16_t)l3);
    wr16le(u + 8, tcp ? 16 : 6);
    if (ipver == 4) {
        ip[0] = 0x45;
        wr16be(ip + 2, (uint16_t)iplen);
        wr16be(ip + 4, 0xfffe); /* the IDs wrap within the packet */
        ip[6] = 0x40;           /* DF */
        ip[8] = 64;
        ip[9] = tcp ? 6 : 17;
        memcpy(ip + 12, "\x0a\x63\x01\x01\x0a\x63\x01\x02", 8);
        wr16be(ip + 10, (uint16_t)~wanem_csum_fold(wanem_csum_add(0, ip, 20)));
    } else {
        ip[0] = 0x60;
        wr16be(ip + 4, (uint16_t)(iplen - 40));
        ip[6] = tcp ? 6 : 17;
        ip[7] = 64;
        for (int i = 0; i < 32; i++)
            ip[8 + i] = (uint8_t)(0xfd + i * 7);
    }
    if (tcp) {
        wr16be(th, 40000);
        wr16be(th + 2, 5201);
        memcpy(th + 4, "\xff\xff\xf0\x00", 4); /* the sequence numbers wrap too */
        th[12] = 8 << 4;
        th[13] = flags;
        wr16be(th + 14, 512);
        memcpy(th + 20, "\x01\x01\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x02", 12);
        wr16be(th + 16, wanem_csum_fold(pseudo(ip, 6, l4 + payload)));
    } else {
        wr16be(th, 40000);
        wr16be(th + 2, 5201);
        wr16be(th + 4, (uint16_t)(8 + payload));
        wr16be(th + 6, wanem_csum_fold(pseudo(ip, 17, 8 + payload)));
    }
    for (uint32_t i = 0; i < payload; i++)
        ip[hdr + i] = (uint8_t)(i * 31 + 7);
    return WANEM_VNET_LEN + iplen;
}

/* The checksum a NIC would complete for a NEEDS_CSUM packet, written in; then the packet's
 * transport checksum must verify (sum with pseudo header == 0xffff) and, for IPv4, the IP
 * header checksum too. */
static void complete_and_verify(uint8_t *u, size_t len)
{
    uint8_t *ip = u + WANEM_VNET_LEN;
    size_t iplen = len - WANEM_VNET_LEN, cs = rd16be((uint8_t[]){u[7], u[6]});
    size_t co = rd16be((uint8_t[]){u[9], u[8]});
    bool tcp = co == 16;

    assert_true(u[0] & VIRTIO_NET_HDR_F_NEEDS_CSUM);
    uint16_t c = (uint16_t)~wanem_csum_fold(wanem_csum_add(0, ip + cs, iplen - cs));
    wr16be(ip + cs + co, c);
    assert_int_equal(
        wanem_csum_fold(wanem_csum_add(pseudo(ip, tcp ? 6 : 17, iplen - cs), ip + cs, iplen - cs)),
        0xffff);
    if (ip[0] >> 4 == 4)
        assert_int_equal(wanem_csum_fold(wanem_csum_add(0, ip, (ip[0] & 15) * 4u)), 0xffff);
}

static void test_csum_rfc1071(void **state)
{
    (void)state;
    /* RFC 1071's example: 0001 f203 f4f5 f6f7 sums to ddf2 */
    const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    assert_int_equal(wanem_csum_fold(wanem_csum_add(0, b, sizeof(b))), 0xddf2);
    /* an odd byte counts as the high half of a last word */
    assert_int_equal(wanem_csum_fold(wanem_csum_add(0, b, 3)), 0x0001 + 0xf200);
}

static void test_parse_tcp4(void **state)
{
    uint8_t *u = malloc(WANEM_MAX_UNIT);
    struct wanem_pkt p;
    size_t len = make_unit(u, 4, true, 44 * MSS + 100, MSS, 0x18 | 0x01 | 0x80);

    (void)state;
    assert_int_equal(wanem_pkt_parse(u, len, &p), 0);
    assert_true(p.splittable);
    assert_int_equal(p.ipver, 4);
    assert_int_equal(p.proto, WANEM_P_TCP);
    assert_int_equal(p.hdr_len, 52);
    assert_int_equal(p.l4_off, 20);
    assert_int_equal(p.gso_size, MSS);
    assert_int_equal(p.payload, 44 * MSS + 100);
    assert_int_equal(p.segs, 45);
    /* on the wire: 44 packets of 1500 bytes and one of 152 */
    assert_int_equal(p.wire_len, 44 * 1500 + 152);
    free(u);
}

/* Cutting the whole range gives the packet back byte for byte. */
static void test_run_identity(void **state)
{
    static const int vers[2] = {4, 6};
    uint8_t *u = malloc(WANEM_MAX_UNIT), *o = malloc(WANEM_MAX_UNIT);
    struct wanem_pkt p;

    (void)state;
    for (int v = 0; v < 2; v++) {
        for (int tcp = 0; tcp < 2; tcp++) {
            size_t len = make_unit(u, vers[v], tcp, 20 * MSS + 7, MSS, 0x10);
            assert_int_equal(wanem_pkt_parse(u, len, &p), 0);
            assert_int_equal(p.segs, 21);
            assert_int_equal(wanem_pkt_run(u, &p, 0, p.segs, o, WANEM_MAX_UNIT), len);
            assert_memory_equal(u, o, len);
        }
    }
    free(u);
    free(o);
}

/* A run from the middle: lengths, ID, sequence number, flags, payload, checksums. */
static void test_run_middle_tcp4(void **state)
{
    uint8_t *u = malloc(WANEM_MAX_UNIT), *o = malloc(WANEM_MAX_UNIT);
    struct wanem_pkt p, q;
    size_t len = make_unit(u, 4, true, 10 * MSS + 100, MSS, 0x10 | 0x08 | 0x01 | 0x80);
    const uint8_t *ip = o + WANEM_VNET_LEN, *th = ip + 20;

    (void)state;
    assert_int_equal(wanem_pkt_parse(u, len, &p), 0);
    size_t n = wanem_pkt_run(u, &p, 3, 4, o, WANEM_MAX_UNIT);
    assert_int_equal(n, WANEM_VNET_LEN + 52 + 4 * MSS);
    assert_int_equal(o[1], VIRTIO_NET_HDR_GSO_TCPV4);
    assert_int_equal(rd16be(ip + 2), 52 + 4 * MSS);
    assert_int_equal(rd16be(ip + 4), (0xfffe + 3) & 0xffff);
    assert_int_equal(rd32be(th + 4), 0xfffff000u + 3 * MSS); /* wraps past 2^32 */
    assert_int_equal(th[13], 0x10);                          /* ACK only: no FIN, PSH, CWR */
    assert_memory_equal(ip + 52, u + WANEM_VNET_LEN + 52 + 3 * MSS, 4 * MSS);
    /* the run is a well-formed super-packet itself */
    assert_int_equal(wanem_pkt_parse(o, n, &q), 0);
    assert_int_equal(q.segs, 4);
    assert_int_equal(q.wire_len, 4 * 1500);
    complete_and_verify(o, n);
    free(u);
    free(o);
}

/* The last segment alone: a plain packet with its FIN and PSH; the first keeps CWR. */
static void test_run_single(void **state)
{
    uint8_t *u = malloc(WANEM_MAX_UNIT), *o = malloc(WANEM_MAX_UNIT);
    struct wanem_pkt p;
    size_t len = make_unit(u, 4, true, 10 * MSS + 100, MSS, 0x10 | 0x08 | 0x01 | 0x80);
    const uint8_t *th = o + WANEM_VNET_LEN + 20;

    (void)state;
    assert_int_equal(wanem_pkt_parse(u, len, &p), 0);
    size_t n = wanem_pkt_run(u, &p, 10, 1, o, WANEM_MAX_UNIT);
    assert_int_equal(n, WANEM_VNET_LEN + 52 + 100);
    assert_int_equal(o[1], VIRTIO_NET_HDR_GSO_NONE);
    assert_int_equal(o[4] | o[5], 0);
    assert_int_equal(th[13], 0x10 | 0x08 | 0x01);
    complete_and_verify(o, n);
    n = wanem_pkt_run(u, &p, 0, 1, o, WANEM_MAX_UNIT);
    assert_int_equal(th[13], 0x10 | 0x80);
    complete_and_verify(o, n);
    /* out of range, empty, or too small a buffer */
    assert_int_equal(wanem_pkt_run(u, &p, 11, 1, o, WANEM_MAX_UNIT), 0);
    assert_int_equal(wanem_pkt_run(u, &p, 5, 0, o, WANEM_MAX_UNIT), 0);
    assert_int_equal(wanem_pkt_run(u, &p, 9, 3, o, WANEM_MAX_UNIT), 0);
    assert_int_equal(wanem_pkt_run(u, &p, 0, 2, o, 100), 0);
    free(u);
    free(o);
}

/* Every segment cut out one by one, from the packet and from a run of it, is the same
 * packet, and verifies: IPv4 and IPv6, TCP and UDP. */
static void test_run_of_run(void **state)
{
    static const int vers[2] = {4, 6};
    uint8_t *u = malloc(WANEM_MAX_UNIT), *r = malloc(WANEM_MAX_UNIT);
    uint8_t *a = malloc(WANEM_MAX_UNIT), *b = malloc(WANEM_MAX_UNIT);
    struct wanem_pkt p, q;

    (void)state;
    for (int v = 0; v < 2; v++) {
        for (int tcp = 0; tcp < 2; tcp++) {
            uint16_t gso = tcp ? MSS : 1400;
            size_t len = make_unit(u, vers[v], tcp, 12 * gso + 33, gso, 0x18);
            assert_int_equal(wanem_pkt_parse(u, len, &p), 0);
            assert_int_equal(p.segs, 13);
            size_t rl = wanem_pkt_run(u, &p, 4, 9, r, WANEM_MAX_UNIT);
            assert_int_equal(wanem_pkt_parse(r, rl, &q), 0);
            assert_int_equal(q.segs, 9);
            for (uint32_t i = 0; i < 9; i++) {
                size_t na = wanem_pkt_run(u, &p, 4 + i, 1, a, WANEM_MAX_UNIT);
                size_t nb = wanem_pkt_run(r, &q, i, 1, b, WANEM_MAX_UNIT);
                assert_int_equal(na, nb);
                assert_memory_equal(a, b, na);
                complete_and_verify(a, na);
                if (!tcp) /* each datagram's UDP length is its own */
                    assert_int_equal(rd16be(a + WANEM_VNET_LEN + p.l4_off + 4),
                                     8 + (i == 8 ? 33 : gso));
            }
        }
    }
    free(u);
    free(r);
    free(a);
    free(b);
}

/* Not a super-packet the emulator may cut: one segment, never split. */
static void test_parse_unsplittable(void **state)
{
    uint8_t *u = malloc(WANEM_MAX_UNIT);
    struct wanem_pkt p;
    size_t len;

    (void)state;
    len = make_unit(u, 4, true, 5 * MSS, MSS, 0x10);
    wr16be(u + WANEM_VNET_LEN + 2, 1000); /* IP length disagrees with what was read */
    assert_int_equal(wanem_pkt_parse(u, len, &p), -1);
    assert_false(p.splittable);
    assert_int_equal(p.segs, 1);
    assert_int_equal(p.wire_len, len - WANEM_VNET_LEN);

    len = make_unit(u, 4, true, 5 * MSS, MSS, 0x10);
    wr16le(u + 4, 0); /* gso_size 0 */
    assert_int_equal(wanem_pkt_parse(u, len, &p), -1);
    len = make_unit(u, 4, true, 5 * MSS, MSS, 0x10);
    u[0] = 0; /* GSO without NEEDS_CSUM */
    assert_int_equal(wanem_pkt_parse(u, len, &p), -1);
    len = make_unit(u, 6, true, 5 * MSS, MSS, 0x10);
    u[1] = VIRTIO_NET_HDR_GSO_TCPV4; /* the type names the other IP version */
    assert_int_equal(wanem_pkt_parse(u, len, &p), -1);
    len = make_unit(u, 4, true, 5 * MSS, MSS, 0x10);
    assert_int_equal(wanem_pkt_parse(u, 12 + 40, &p), -1); /* cut inside the TCP header */
    assert_int_equal(wanem_pkt_parse(u, 5, &p), -1);       /* shorter than a vnet header */

    /* plain packets: one segment, classified by protocol */
    len = make_unit(u, 4, false, 200, 1400, 0);
    u[0] = u[1] = 0;
    assert_int_equal(wanem_pkt_parse(u, len, &p), 0);
    assert_false(p.splittable);
    assert_int_equal(p.proto, WANEM_P_UDP);
    assert_int_equal(p.segs, 1);
    u[WANEM_VNET_LEN + 9] = 1;
    assert_int_equal(wanem_pkt_parse(u, len, &p), 0);
    assert_int_equal(p.proto, WANEM_P_ICMP);
    u[WANEM_VNET_LEN] = 0x15; /* neither IPv4 nor IPv6 */
    assert_int_equal(wanem_pkt_parse(u, len, &p), 0);
    assert_int_equal(p.ipver, 0);
    assert_int_equal(p.proto, WANEM_P_OTHER);
    free(u);
}

/* Runs between lost segments: all kept, all lost, alternating, edges. */
static void test_next_run(void **state)
{
    uint8_t lost[8] = {0};
    uint32_t i = 0, n;

    (void)state;
    assert_int_equal(wanem_pkt_next_run(lost, 45, &i), 45);
    memset(lost, 0xff, sizeof(lost));
    i = 0;
    assert_int_equal(wanem_pkt_next_run(lost, 45, &i), 0);
    memset(lost, 0, sizeof(lost));
    lost[0] = 0x01 | 0x08; /* segments 0 and 3 */
    lost[5] = 0x10;        /* segment 44 */
    i = 0;
    n = wanem_pkt_next_run(lost, 45, &i);
    assert_int_equal(i, 1);
    assert_int_equal(n, 2);
    i += n;
    n = wanem_pkt_next_run(lost, 45, &i);
    assert_int_equal(i, 4);
    assert_int_equal(n, 40);
    i += n;
    assert_int_equal(wanem_pkt_next_run(lost, 45, &i), 0);
}

/* Every Nth: exactly segs / N lost, at N, 2N, ... counted across packets. */
static void test_loss_every(void **state)
{
    struct wanem_loss l = {.every = 7};
    uint64_t lost = 0;

    (void)state;
    for (uint64_t k = 1; k <= 7000; k++) {
        bool d = wanem_loss_draw(&l);
        assert_int_equal(d, k % 7 == 0);
        lost += d;
    }
    assert_int_equal(lost, 1000);
}

/* Random: the same seed gives the same draws; the count is binomial (within 5 sigma). */
static void test_loss_random(void **state)
{
    struct wanem_loss a = {.p = 0.01}, b = {.p = 0.01};
    uint64_t lost = 0, n = 1000000;

    (void)state;
    wanem_rng_seed(&a.rng, 42);
    wanem_rng_seed(&b.rng, 42);
    for (uint64_t k = 0; k < n; k++) {
        bool d = wanem_loss_draw(&a);
        assert_int_equal(d, wanem_loss_draw(&b));
        lost += d;
    }
    assert_in_range(lost, 10000 - 500, 10000 + 500); /* sigma = 99.5 */
    struct wanem_loss none = {0};
    assert_false(wanem_loss_active(&none));
    assert_false(wanem_loss_draw(&none));
    struct wanem_rng g;
    wanem_rng_seed(&g, 1);
    for (int k = 0; k < 1000; k++) {
        double x = wanem_rng_unit(&g);
        assert_true(x >= 0 && x < 1);
    }
}

/* The ring against a model queue: random sizes, random pops; every entry comes out intact
 * and in order, `used` never exceeds the capacity, and a full ring refuses. */
static void test_ring_model(void **state)
{
    struct wanem_ring r;
    struct wanem_rng g;
    enum { QMAX = 4096 };
    static uint32_t qlen[QMAX], qtag[QMAX];
    uint32_t qh = 0, qt = 0, tag = 0;
    uint64_t refused = 0, wraps = 0;
    size_t cap = 256 * 1024;

    (void)state;
    wanem_rng_seed(&g, 7);
    assert_int_equal(wanem_ring_init(&r, cap), 0);
    assert_null(wanem_ring_head(&r));
    for (int step = 0; step < 200000; step++) {
        if (wanem_rng_unit(&g) < 0.52) {
            size_t len = 1 + wanem_rng_next(&g) % (wanem_rng_unit(&g) < 0.2 ? 65000 : 1500);
            struct wanem_entry *e = wanem_ring_reserve(&r, len);
            if (!e) {
                refused++;
                assert_true(r.count > 0); /* an empty ring takes anything that fits */
                continue;
            }
            /* a second reserve gives the same place */
            assert_ptr_equal(wanem_ring_reserve(&r, len), e);
            bool wrapped = r.res_wrap;
            e->len = (uint32_t)len;
            e->seq = tag;
            memset(e->data, (int)(tag & 0xff), len);
            wanem_ring_commit(&r);
            wraps += wrapped;
            qlen[qt % QMAX] = (uint32_t)len;
            qtag[qt % QMAX] = tag++;
            qt++;
            assert_true(qt - qh < QMAX);
        } else if (qh != qt) {
            struct wanem_entry *e = wanem_ring_head(&r);
            assert_non_null(e);
            assert_int_equal(e->len, qlen[qh % QMAX]);
            assert_int_equal(e->seq, qtag[qh % QMAX]);
            for (uint32_t k = 0; k < e->len; k += 97)
                assert_int_equal(e->data[k], qtag[qh % QMAX] & 0xff);
            assert_int_equal(e->data[e->len - 1], qtag[qh % QMAX] & 0xff);
            wanem_ring_pop(&r);
            qh++;
        }
        assert_int_equal(r.count, qt - qh);
        assert_true(r.used <= r.cap);
        if (!r.count)
            assert_null(wanem_ring_head(&r));
    }
    assert_true(refused > 0); /* it did fill up */
    assert_true(wraps > 100);
    while (wanem_ring_head(&r))
        wanem_ring_pop(&r);
    assert_int_equal(r.used, 0);
    wanem_ring_free(&r);
}

/* Capacity: entries of one size fill it exactly to what fits, then it refuses. */
static void test_ring_full(void **state)
{
    struct wanem_ring r;
    size_t need = wanem_ring_need(1000);
    uint32_t n = 0;

    (void)state;
    assert_int_equal(wanem_ring_init(&r, 100 * need), 0);
    struct wanem_entry *e;
    while ((e = wanem_ring_reserve(&r, 1000))) {
        e->len = 1000;
        wanem_ring_commit(&r);
        n++;
    }
    assert_int_equal(n, 100);
    assert_int_equal(r.used, 100 * need);
    wanem_ring_pop(&r);
    /* one slot free at the start: a wrap needs strictly more room than the entry */
    assert_null(wanem_ring_reserve(&r, 1000));
    wanem_ring_pop(&r);
    e = wanem_ring_reserve(&r, 1000);
    assert_ptr_equal(e, r.buf);
    e->len = 1000;
    wanem_ring_commit(&r);
    assert_int_equal(r.count, 99);
    while (r.count)
        wanem_ring_pop(&r);
    assert_int_equal(r.used, 0);
    wanem_ring_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csum_rfc1071),       cmocka_unit_test(test_parse_tcp4),
        cmocka_unit_test(test_run_identity),       cmocka_unit_test(test_run_middle_tcp4),
        cmocka_unit_test(test_run_single),         cmocka_unit_test(test_run_of_run),
        cmocka_unit_test(test_parse_unsplittable), cmocka_unit_test(test_next_run),
        cmocka_unit_test(test_loss_every),         cmocka_unit_test(test_loss_random),
        cmocka_unit_test(test_ring_model),         cmocka_unit_test(test_ring_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
