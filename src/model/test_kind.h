/* test_kind: what a test measures, one const descriptor per kind that owns everything
 * kind-specific the model knows: its names, its id on the wire, its transport, the options
 * its command takes, what it counts (and so how a run's sides merge and which sections its
 * reports have), how its data paths open, how many flows its server runs, its slot in the
 * daemon's metrics. A test's kind is resolved once from its parameters (test_kind_of); callers
 * ask the descriptor what to do, never which kind they hold. Higher layers keep their own
 * per-kind tables indexed by the descriptor's fields (flows/flow_kinds.c: the flow operations;
 * client/client_flows.c and daemon/session.c: the data paths by path). Adding a kind: a row
 * here (and its flow table row if it needs other flow operations); a row with a command is a
 * command of its own ('netrig <command>'). */
#ifndef NETRIG_TEST_KIND_H
#define NETRIG_TEST_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"

/* What a kind counts and how it behaves: the result merge and the report sections follow. */
#define TEST_KIND_TXN       (1u << 0) /* transactions and their latency (rr, crr) */
#define TEST_KIND_DATAGRAMS (1u << 1) /* datagrams at a set rate: loss, jitter (UDP streams) */
#define TEST_KIND_BULK      (1u << 2) /* a byte stream: throughput is its figure */
#define TEST_KIND_DRAINS    (1u << 3) /* senders half-close, receivers read to end-of-file */
#define TEST_KIND_UDP       (1u << 4) /* its sockets are UDP */
#define TEST_KIND_MPTCP     (1u << 5) /* its sockets are Multipath TCP: subflows reported */
/* a connection per transaction: its server runs one listener per thread, not the flows */
#define TEST_KIND_CONN_PER_TXN (1u << 6)

/* The options (parameters) a kind's command takes, beyond those every test takes. */
#define TEST_KIND_OPT_DIR          (1u << 0)  /* -R, --bidir */
#define TEST_KIND_OPT_LENGTH       (1u << 1)  /* -l */
#define TEST_KIND_OPT_MSS          (1u << 2)  /* --mss */
#define TEST_KIND_OPT_NODELAY      (1u << 3)  /* -N */
#define TEST_KIND_OPT_ZEROCOPY     (1u << 4)  /* -Z */
#define TEST_KIND_OPT_ZEROCOPY_RX  (1u << 5)  /* --zerocopy-rx */
#define TEST_KIND_OPT_SKIP_RX_COPY (1u << 6)  /* --skip-rx-copy */
#define TEST_KIND_OPT_FQ_RATE      (1u << 7)  /* --fq-rate */
#define TEST_KIND_OPT_BITRATE      (1u << 8)  /* -b */
#define TEST_KIND_OPT_PPS          (1u << 9)  /* --pps */
#define TEST_KIND_OPT_UDP          (1u << 10) /* -u: its UDP variant */
#define TEST_KIND_OPT_LIMIT        (1u << 11) /* -n, -k */
#define TEST_KIND_OPT_CPORT        (1u << 12) /* --cport */
#define TEST_KIND_OPT_DF           (1u << 13) /* --dont-fragment */
#define TEST_KIND_OPT_SIZES        (1u << 14) /* -r */
#define TEST_KIND_OPT_DEPTH        (1u << 15) /* --depth */
#define TEST_KIND_OPT_TPS          (1u << 16) /* --rate */
#define TEST_KIND_OPT_CONNECT_ONLY (1u << 17) /* --connect-only */
#define TEST_KIND_OPT_BUSY_POLL    (1u << 18) /* --busy-poll */
#define TEST_KIND_OPT_HISTOGRAM    (1u << 19) /* --histogram */
#define TEST_KIND_OPT_TXN_TIMEOUT  (1u << 20) /* --txn-timeout */
#define TEST_KIND_OPT_WINDOW       (1u << 21) /* -w */
#define TEST_KIND_OPT_IPERF3       (1u << 22) /* --iperf3 */
#define TEST_KIND_OPT_MPTCP        (1u << 23) /* --mptcp: its MPTCP variant */
#define TEST_KIND_OPT_NOTSENT      (1u << 24) /* --notsent-lowat */

/* How a kind's data paths open: the tables of client_flows.c and session.c are indexed by it. */
enum test_kind_path {
    TEST_KIND_PATH_CONN,     /* a connection per flow through the daemon's port ("NRDT") */
    TEST_KIND_PATH_DGRAM,    /* a UDP socket pair per flow, the server's ports in "accept" */
    TEST_KIND_PATH_LISTENER, /* a listener per server thread, a connection per transaction */
    TEST_KIND_NPATHS
};

/* Each kind's index, for the per-kind tables of higher layers (flows' operations). */
enum test_kind_id {
    TEST_KIND_STREAM,
    TEST_KIND_STREAM_UDP,
    TEST_KIND_RR,
    TEST_KIND_RR_UDP,
    TEST_KIND_CRR,
    TEST_KIND_STREAM_MPTCP,
    TEST_KIND_RR_MPTCP,
    TEST_KIND_COUNT
};

/* The daemon's metrics count tests by (test, protocol): this many slots. */
#define TEST_KIND_SLOTS 8

struct test_kind {
    enum test_kind_id id;
    const char *name;        /* its own name: "stream", "stream-udp", "rr-mptcp", ... */
    const char *command;     /* 'netrig <command>' runs it as its base kind; NULL = a variant */
    const char *summary;     /* the command's line in 'netrig --help' */
    const char *label;       /* what reports and logs add to the test's name: " udp", "" */
    const char *label_paren; /* the same in the text report's headline: " (udp)", "" */
    enum params_test test;   /* its id on the wire ("test": "stream") */
    bool udp, mptcp;         /* its transport as the wire says it ("udp", "mptcp") */
    unsigned flags;          /* TEST_KIND_* */
    uint32_t opts;           /* TEST_KIND_OPT_*: what its command takes */
    enum test_kind_path path;
    unsigned slot; /* < TEST_KIND_SLOTS: its slot in the daemon's metrics */
};

/* The kinds, in a fixed order; NULL past the last. */
const struct test_kind *test_kind_at(unsigned i);
/* The kind test p runs (test, -u, --mptcp); never NULL. */
const struct test_kind *test_kind_of(const struct params *p);
/* The base kind of 'netrig <command>'; NULL when no kind has that command. */
const struct test_kind *test_kind_command(const char *command);
/* The kinds' commands for people, "stream, rr, crr or mptcp", into buf. */
void test_kind_commands(char *buf, size_t len);
/* Does the kind a stored or sent run names by its wire test ("stream", "rr", "crr": its base
 * kind) have every one of flags? False for names no kind has ("load"). */
bool test_kind_named_is(const char *test, unsigned flags);
/* Does test p's kind have every one of flags? */
bool test_kind_is(const struct params *p, unsigned flags);
/* Makes p a test of kind k (its test, transport). */
void test_kind_apply(const struct test_kind *k, struct params *p);
/* Flows the server runs for test p (a listener per thread where the kind has listeners). */
uint32_t test_kind_server_flows(const struct params *p);
/* "tcp", "udp" or "mptcp": the protocol label the daemon's metrics and the exporter use. */
const char *test_kind_protocol(const struct test_kind *k);
/* The metrics slot's test and protocol names; does any kind fill the slot? */
bool test_kind_slot(unsigned slot, const char **test, const char **protocol);

#endif
