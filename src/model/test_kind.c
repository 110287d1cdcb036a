/* test_kind: one const descriptor per kind of test, and the choice of one for a test. */
#include "test_kind.h"

#include <stdio.h>
#include <string.h>

#define OPTS_STREAM                                                                                \
    (TEST_KIND_OPT_DIR | TEST_KIND_OPT_LENGTH | TEST_KIND_OPT_MSS | TEST_KIND_OPT_NODELAY |        \
     TEST_KIND_OPT_ZEROCOPY | TEST_KIND_OPT_ZEROCOPY_RX | TEST_KIND_OPT_SKIP_RX_COPY |             \
     TEST_KIND_OPT_FQ_RATE | TEST_KIND_OPT_BITRATE | TEST_KIND_OPT_PPS | TEST_KIND_OPT_UDP |       \
     TEST_KIND_OPT_LIMIT | TEST_KIND_OPT_CPORT | TEST_KIND_OPT_DF | TEST_KIND_OPT_WINDOW |         \
     TEST_KIND_OPT_IPERF3 | TEST_KIND_OPT_MPTCP | TEST_KIND_OPT_NOTSENT)
#define OPTS_TXN                                                                                   \
    (TEST_KIND_OPT_SIZES | TEST_KIND_OPT_BUSY_POLL | TEST_KIND_OPT_HISTOGRAM |                     \
     TEST_KIND_OPT_TXN_TIMEOUT)
#define OPTS_RR                                                                                    \
    (OPTS_TXN | TEST_KIND_OPT_MSS | TEST_KIND_OPT_UDP | TEST_KIND_OPT_CPORT | TEST_KIND_OPT_DF |   \
     TEST_KIND_OPT_DEPTH | TEST_KIND_OPT_TPS | TEST_KIND_OPT_WINDOW | TEST_KIND_OPT_MPTCP)
#define OPTS_CRR (OPTS_TXN | TEST_KIND_OPT_CONNECT_ONLY)
/* MPTCP sockets have no MSG_ZEROCOPY, TCP_ZEROCOPY_RECEIVE or SO_MAX_PACING_RATE, and carry
 * TCP only (no -u, --pps, --dont-fragment); iperf3 is not asked for MPTCP; --mptcp is itself */
#define OPTS_MPTCP                                                                                 \
    (OPTS_STREAM & ~(TEST_KIND_OPT_ZEROCOPY | TEST_KIND_OPT_ZEROCOPY_RX | TEST_KIND_OPT_FQ_RATE |  \
                     TEST_KIND_OPT_PPS | TEST_KIND_OPT_UDP | TEST_KIND_OPT_IPERF3 |                \
                     TEST_KIND_OPT_DF | TEST_KIND_OPT_MPTCP))

static const struct test_kind kinds[TEST_KIND_COUNT] = {
    [TEST_KIND_STREAM] = {.id = TEST_KIND_STREAM,
                          .name = "stream",
                          .command = "stream",
                          .summary = "throughput: TCP, or paced UDP with -u (loss, jitter)",
                          .label = "",
                          .label_paren = "",
                          .test = PARAMS_TEST_STREAM,
                          .flags = TEST_KIND_BULK | TEST_KIND_DRAINS,
                          .opts = OPTS_STREAM,
                          .path = TEST_KIND_PATH_CONN,
                          .slot = 0},
    [TEST_KIND_STREAM_UDP] = {.id = TEST_KIND_STREAM_UDP,
                              .name = "stream-udp",
                              .label = " udp",
                              .label_paren = " (udp)",
                              .test = PARAMS_TEST_STREAM,
                              .udp = true,
                              .flags = TEST_KIND_BULK | TEST_KIND_DATAGRAMS | TEST_KIND_UDP,
                              .opts = OPTS_STREAM,
                              .path = TEST_KIND_PATH_DGRAM,
                              .slot = 1},
    [TEST_KIND_RR] = {.id = TEST_KIND_RR,
                      .name = "rr",
                      .command = "rr",
                      .summary = "request/response latency and rate, TCP or UDP",
                      .label = "",
                      .label_paren = "",
                      .test = PARAMS_TEST_RR,
                      .flags = TEST_KIND_TXN,
                      .opts = OPTS_RR,
                      .path = TEST_KIND_PATH_CONN,
                      .slot = 2},
    [TEST_KIND_RR_UDP] = {.id = TEST_KIND_RR_UDP,
                          .name = "rr-udp",
                          .label = " udp",
                          .label_paren = " (udp)",
                          .test = PARAMS_TEST_RR,
                          .udp = true,
                          .flags = TEST_KIND_TXN | TEST_KIND_UDP,
                          .opts = OPTS_RR,
                          .path = TEST_KIND_PATH_DGRAM,
                          .slot = 3},
    [TEST_KIND_CRR] = {.id = TEST_KIND_CRR,
                       .name = "crr",
                       .command = "crr",
                       .summary = "connection rate: connect, request, response, close",
                       .label = "",
                       .label_paren = "",
                       .test = PARAMS_TEST_CRR,
                       .flags = TEST_KIND_TXN | TEST_KIND_CONN_PER_TXN,
                       .opts = OPTS_CRR,
                       .path = TEST_KIND_PATH_LISTENER,
                       .slot = 4},
    /* a stream over Multipath TCP: 'netrig mptcp', or 'netrig stream --mptcp' */
    [TEST_KIND_STREAM_MPTCP] = {.id = TEST_KIND_STREAM_MPTCP,
                                .name = "stream-mptcp",
                                .command = "mptcp",
                                .summary = "throughput over Multipath TCP: each subflow's path",
                                .label = "",
                                .label_paren = "",
                                .test = PARAMS_TEST_STREAM,
                                .mptcp = true,
                                .flags = TEST_KIND_BULK | TEST_KIND_DRAINS | TEST_KIND_MPTCP,
                                .opts = OPTS_MPTCP,
                                .path = TEST_KIND_PATH_CONN,
                                .slot = 6},
    [TEST_KIND_RR_MPTCP] = {.id = TEST_KIND_RR_MPTCP,
                            .name = "rr-mptcp",
                            .label = "",
                            .label_paren = "",
                            .test = PARAMS_TEST_RR,
                            .mptcp = true,
                            .flags = TEST_KIND_TXN | TEST_KIND_MPTCP,
                            .opts = OPTS_RR,
                            .path = TEST_KIND_PATH_CONN,
                            .slot = 7},
};

/* the metrics' slots: (test, protocol), the test as the wire names it and the transport, so
 * a Multipath TCP stream counts as ("stream", "mptcp"), apart from plain TCP; crr over UDP or
 * MPTCP is no kind */
static const char *const slot_test[TEST_KIND_SLOTS] = {"stream", "stream", "rr",     "rr",
                                                       "crr",    "crr",    "stream", "rr"};
static const char *const slot_proto[TEST_KIND_SLOTS] = {"tcp", "udp", "tcp",   "udp",
                                                        "tcp", "udp", "mptcp", "mptcp"};

const struct test_kind *test_kind_at(unsigned i) { return i < TEST_KIND_COUNT ? &kinds[i] : NULL; }

/* A combination no kind has (params_validate refuses it: crr -u, -u --mptcp) resolves to the
 * closest, so the checks before the refusal see its transport: -u over --mptcp, else the
 * command's kind. */
const struct test_kind *test_kind_of(const struct params *p)
{
    const struct test_kind *near = NULL, *base = &kinds[TEST_KIND_STREAM];

    for (unsigned i = 0; i < TEST_KIND_COUNT; i++) {
        if (kinds[i].test != p->test)
            continue;
        if (kinds[i].udp == p->udp && kinds[i].mptcp == p->mptcp)
            return &kinds[i];
        if (kinds[i].udp == p->udp && !near)
            near = &kinds[i];
        if (kinds[i].command && base->test != p->test)
            base = &kinds[i];
    }
    return near ? near : base;
}

const struct test_kind *test_kind_command(const char *command)
{
    for (unsigned i = 0; i < TEST_KIND_COUNT; i++)
        if (kinds[i].command && !strcmp(kinds[i].command, command))
            return &kinds[i];
    return NULL;
}

bool test_kind_is(const struct params *p, unsigned flags)
{
    return (test_kind_of(p)->flags & flags) == flags;
}

void test_kind_commands(char *buf, size_t len)
{
    unsigned n = 0, left = 0;
    size_t at = 0;

    for (unsigned i = 0; i < TEST_KIND_COUNT; i++)
        left += kinds[i].command != NULL;
    buf[0] = '\0';
    for (unsigned i = 0; i < TEST_KIND_COUNT && at < len; i++) {
        if (!kinds[i].command)
            continue;
        int w = snprintf(buf + at, len - at, "%s%s",
                         !n              ? ""
                         : n + 1 == left ? " or "
                                         : ", ",
                         kinds[i].command);
        at += w > 0 ? (size_t)w : 0;
        n++;
    }
}

bool test_kind_named_is(const char *test, unsigned flags)
{
    for (unsigned i = 0; test && i < TEST_KIND_COUNT; i++)
        if (!strcmp(params_test_name(kinds[i].test), test))
            return (kinds[i].flags & flags) == flags; /* the first: the command's own */
    return false;
}

void test_kind_apply(const struct test_kind *k, struct params *p)
{
    p->test = k->test;
    p->udp = k->udp;
    p->mptcp = k->mptcp;
}

uint32_t test_kind_server_flows(const struct params *p)
{
    if (test_kind_of(p)->flags & TEST_KIND_CONN_PER_TXN)
        return p->server_threads ? p->server_threads : p->threads;
    return params_total_flows(p);
}

const char *test_kind_protocol(const struct test_kind *k) { return slot_proto[k->slot]; }

bool test_kind_slot(unsigned slot, const char **test, const char **protocol)
{
    bool used = false;

    if (slot >= TEST_KIND_SLOTS)
        return false;
    *test = slot_test[slot];
    *protocol = slot_proto[slot];
    for (unsigned i = 0; i < TEST_KIND_COUNT; i++)
        used |= kinds[i].slot == slot;
    return used;
}
