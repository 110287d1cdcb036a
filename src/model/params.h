/* params: one test's parameters, their limits, and their JSON form on the control channel. */
#ifndef NETRIG_PARAMS_H
#define NETRIG_PARAMS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARAMS_MAX_FLOWS       8192
#define PARAMS_MAX_THREADS     256
#define PARAMS_MAX_DURATION_NS (86400ULL * 1000000000ULL)
#define PARAMS_MIN_INTERVAL_NS (100ULL * 1000000ULL)
#define PARAMS_MAX_WRITE       (16U << 20)
#define PARAMS_MAX_WINDOW      (1U << 30)
#define PARAMS_NOTSENT_AUTO    (-1)
#define PARAMS_CC_LEN          16

#define PARAMS_MAX_UDP_DATAGRAM 65507
#define PARAMS_MAX_DEPTH        1024
#define PARAMS_MAX_TPS          100000000ULL
#define PARAMS_MAX_LIMIT        (1ULL << 53) /* -n bytes, -k blocks: exact as JSON numbers */
#define PARAMS_MAX_BURST        1000         /* -b RATE/BURST, as iperf3 */
#define PARAMS_UDP_HEADER       16           /* the smallest datagram a receiver counts */

/* --sample: time series of every flow (counters and TCP_INFO), read off the hot path */
#define PARAMS_MIN_SAMPLE_NS   (10ULL * 1000000ULL)
#define PARAMS_MAX_SAMPLE_RATE 100000 /* flow samples a second at most (flows / period) */

enum params_dir { PARAMS_DIR_FORWARD, PARAMS_DIR_REVERSE, PARAMS_DIR_BIDIR };
enum params_test { PARAMS_TEST_STREAM, PARAMS_TEST_RR, PARAMS_TEST_CRR };

struct params {
    uint32_t flows;          /* -P: flows per direction */
    uint32_t threads;        /* -T: client worker threads */
    uint32_t server_threads; /* worker threads on the server (defaults to threads) */
    uint64_t duration_ns;    /* -t */
    uint64_t omit_ns;        /* -O */
    uint64_t interval_ns;    /* -i; 0 = no interval reports */
    uint32_t write_size;     /* -l */
    uint32_t window;         /* -w; 0 = kernel autotuning */
    uint32_t mss;            /* --mss; 0 = default */
    bool nodelay;
    bool zerocopy;        /* -Z: the sending ends' zero-copy (MSG_ZEROCOPY / sendfile) */
    bool zerocopy_rx;     /* --zerocopy-rx: receivers map the socket (TCP_ZEROCOPY_RECEIVE) */
    bool skip_rx_copy;    /* --skip-rx-copy: receivers discard data (MSG_TRUNC), no copy */
    uint64_t fq_rate_bps; /* --fq-rate; 0 = unpaced */
    /* --notsent-lowat: TCP_NOTSENT_LOWAT on the sending sockets, bytes; 0 = off;
     * PARAMS_NOTSENT_AUTO = set (to ENGINE_NOTSENT_AUTO) where a worker takes turns over flows */
    int32_t notsent_lowat;
    enum params_dir dir;
    char congestion[PARAMS_CC_LEN]; /* -C; "" = system default */
    char server_cpus[256];          /* --server-cpus: cpulist, "auto" or "" */
    char title[128];
    enum params_test test;
    bool udp;          /* -u: UDP stream or UDP request/response */
    uint32_t req_size; /* rr/crr -r REQ[,RESP] */
    uint32_t resp_size;
    uint32_t depth;          /* --depth: transactions in flight per flow (closed loop) */
    uint64_t rate_tps;       /* --rate: transactions/s over all flows (open loop); 0 = closed */
    bool connect_only;       /* crr --connect-only */
    bool busy_poll;          /* spin on non-blocking sockets instead of sleeping in epoll */
    bool mptcp;              /* --mptcp: TCP data connections are Multipath TCP (IPPROTO_MPTCP) */
    uint64_t udp_rate_bps;   /* -b: UDP stream rate per flow, bits/s */
    uint64_t udp_pps;        /* --pps: UDP stream datagrams/s per flow (instead of -b) */
    uint64_t txn_timeout_ns; /* rr/crr: a transaction unanswered this long is given up */
    bool iperf3_wire;        /* talking to iperf3: its UDP datagram format (flow_iperf3_udp.c) */
    bool iperf3_udp64;       /* iperf3 --udp-counters-64bit: 64-bit datagram sequence numbers */
    uint64_t sample_ns;      /* --sample: each flow's counters and TCP_INFO this often; 0 = off */
    /* client only, not on the wire: rr as a latency probe (netrig load): every transaction's
     * time and latency kept, timed from its actual send (lateness counted apart) to the
     * kernel's receive time (UDP), so the host's scheduling does not pass for the network */
    bool probe;
    /* stream tests that end after a transfer: each direction's senders together move exactly
     * this much (after the warm-up); 0 = no such limit. With duration_ns 0 it is the only end. */
    uint64_t bytes_limit;  /* -n: bytes */
    uint64_t blocks_limit; /* -k: writes of write_size bytes (TCP) or datagrams (UDP) */
    uint64_t app_rate_bps; /* TCP -b: each sending flow paced in the application, bits/s */
    uint32_t burst;        /* -b RATE/BURST: writes (TCP) or datagrams (UDP) back to back */
    uint8_t tos;           /* -S/--dscp: IP TOS byte (IPv6 traffic class) of data packets */
    /* netrig load --classes: flow i marked with class i of the set in turn (dsclass.h), on
     * both ends; DSCLASS_NONE (0) = every flow gets tos. Not with tos, not with crr. */
    uint8_t classes;
    bool dont_fragment; /* UDP: IP_PMTUDISC_DO, datagrams are never fragmented */
    /* Not on the wire: this end's TCP receivers read at most this fast per flow (a daemon's
     * --max-rate share for clients that do not pace themselves); 0 = unpaced. */
    uint64_t recv_rate_bps;
    /* -b UP,DOWN with --bidir: the flows the server sends go at down_rate_bps (TCP pacing, 0 =
     * unpaced; or the UDP rate) and app_rate_bps/udp_rate_bps hold the client's rate. */
    bool down_rate_set;
    uint64_t down_rate_bps;
};

void params_defaults(struct params *p);

/* Checks every field against its limits; err gets one line naming the value. */
int params_validate(const struct params *p, char *err, size_t errlen);

/* The --sample period a test gets when none is given: its interval (0 = none), made longer
 * when the flows would need more than PARAMS_MAX_SAMPLE_RATE samples a second. */
uint64_t params_default_sample(const struct params *p);
/* The shortest --sample period the flows of p allow. */
uint64_t params_min_sample(const struct params *p);
/* Does the test end after a transfer (-n or -k)? */
bool params_has_limit(const struct params *p);
/* The transfer each direction makes under -n/-k: bytes for TCP, datagrams for UDP (the last
 * of them *tail bytes long, the others write_size); 0 without a limit. */
uint64_t params_limit_units(const struct params *p, uint32_t *tail);
/* "bytes" (-n), "blocks" (-k) or "" */
const char *params_limit_name(const struct params *p);
/* What ends the test, for people: "10s", "100.0 MiB", "1000 blocks", "10s or 100.0 MiB"
 * ("each way" with --bidir). */
void params_span(const struct params *p, char *buf, size_t len);
/* How long the test may run: duration_ns, or when only -n/-k ends it, the longest a test may
 * last (PARAMS_MAX_DURATION_NS). */
uint64_t params_time_cap_ns(const struct params *p);

/* Number of flows in the test (bidir doubles -P). */
uint32_t params_total_flows(const struct params *p);
/* The pacing (TCP) or sending rate (UDP) of a flow sent by the client (client_sends) or by
 * the server, bits/s: -b, or its DOWN part for the server's flows under -b UP,DOWN. */
uint64_t params_send_rate(const struct params *p, bool client_sends);
/* Is flow i sent by the client? Flows are numbered 0..total-1, client→server first. */
bool params_flow_client_sends(const struct params *p, uint32_t i);

const char *params_dir_name(enum params_dir d);
const char *params_test_name(enum params_test t);
/* "stream", "rr", "crr" → enum; -1 when unknown. */
int params_test_from_name(const char *s);
/* Does the test measure transactions (and so latency)? */
bool params_is_transactional(const struct params *p);

/* -S: the whole TOS byte, 0-255, in decimal, hex (0x) or octal (0), as iperf3 takes it. */
int params_parse_tos(const char *s, uint8_t *tos);
/* --dscp: a name (AF11..AF43, EF, VA, LE, CS0..CS7; any case) or a number 0-63 (decimal, hex,
 * octal); *tos gets the DSCP shifted into the TOS byte. 0, or -EINVAL. */
int params_parse_dscp(const char *s, uint8_t *tos);

cJSON *params_to_json(const struct params *p);
/* Reads params sent by a peer: each field checked for type and range; unknown keys ignored. */
int params_from_json(const cJSON *obj, struct params *p, char *err, size_t errlen);

#endif
