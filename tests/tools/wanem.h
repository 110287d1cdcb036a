/* wanem: a WAN emulator for netrig's tests. Two TUN devices (IFF_VNET_HDR, TSO/USO offered to
 * the kernel) join two network namespaces; every packet read from one device is held for the
 * configured one-way delay, then written into the other. Loss (seeded random or every Nth),
 * jitter and reordering are optional; rate limits are left to tbf on the devices' egress.
 *
 * The pure parts live in their own files so the unit tests can link them:
 *   wanem_pkt.c   the vnet header + IP packet: parse, and cut a super-packet into the runs of
 *                 segments that survive loss (IP lengths, IDs, TCP sequence numbers and flags,
 *                 the partial checksums fixed as the kernel's own segmentation does)
 *   wanem_ring.c  the per-direction FIFO of held packets: one byte ring, bounded
 *   wanem_model.c the random source and the per-segment loss, jitter and reorder draws
 *   wanem_relay.c the event loop: read, decide, hold, release, counters
 *   wanem_stats.c the counters as JSON
 *   wanem.c       options, the devices in their namespaces, signals, main */
#ifndef WANEM_H
#define WANEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The vnet header as the device reads and writes it: struct virtio_net_hdr (10 bytes) and
 * the 2 bytes of num_buffers, so that the IP header starts 4-byte aligned (TUNSETVNETHDRSZ). */
#define WANEM_VNET_LEN 12
/* The largest IP packet a TUN device hands over (GSO_LEGACY_MAX_SIZE) and a little room. */
#define WANEM_MAX_IP   (65536 + 256)
#define WANEM_MAX_UNIT (WANEM_VNET_LEN + WANEM_MAX_IP)

#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5
#endif

/* ---- wanem_pkt.c ------------------------------------------------------------------------ */

enum wanem_proto { WANEM_P_TCP, WANEM_P_UDP, WANEM_P_ICMP, WANEM_P_OTHER, WANEM_P_COUNT };

struct wanem_pkt {
    uint8_t ipver;     /* 4, 6, or 0 when the packet is not IP */
    uint8_t proto;     /* enum wanem_proto */
    uint8_t gso_type;  /* VIRTIO_NET_HDR_GSO_* without the ECN bit */
    bool splittable;   /* a TCP or UDP super-packet whose segments can be cut apart */
    uint16_t l4_off;   /* transport header offset in the IP packet */
    uint16_t hdr_len;  /* IP + transport header bytes, repeated in every segment */
    uint16_t gso_size; /* payload bytes per segment */
    uint32_t ip_len;   /* the IP packet as read */
    uint32_t payload;  /* bytes after hdr_len (super-packets only) */
    uint32_t segs;     /* packets on the wire: 1 unless splittable */
    uint64_t wire_len; /* their IP bytes: ip_len + (segs - 1) * hdr_len */
};

/* Parses a unit (vnet header + IP packet) of len bytes. A packet that is not a well-formed TCP
 * or UDP super-packet is one segment and is never cut; returns -1 when the vnet header says
 * GSO but the packet does not agree (still one segment), else 0. */
int wanem_pkt_parse(const uint8_t *unit, size_t len, struct wanem_pkt *p);

/* Writes into out (cap bytes) a unit that carries segments [first, first + n) of the parsed
 * super-packet in unit: a super-packet again when n > 1, a plain packet with its checksum
 * still to be completed (NEEDS_CSUM) when n == 1. Returns its length, or 0 when the range is
 * empty, out of bounds or does not fit. */
size_t wanem_pkt_run(const uint8_t *unit, const struct wanem_pkt *p, uint32_t first, uint32_t n,
                     uint8_t *out, size_t cap);

/* The next run of consecutive kept segments at or after *i, given a bit per segment set for
 * the lost ones: its first segment in *i, its length returned (0: no more runs). Call again
 * with *i advanced by that length. */
uint32_t wanem_pkt_next_run(const uint8_t *lost, uint32_t segs, uint32_t *i);

/* The Internet checksum helpers the run builder uses (exported for the unit tests):
 * the one's-complement sum of len bytes added to sum, and that sum folded to 16 bits. */
uint32_t wanem_csum_add(uint32_t sum, const uint8_t *p, size_t len);
uint16_t wanem_csum_fold(uint32_t sum);

/* ---- wanem_ring.c ----------------------------------------------------------------------- */

/* One held packet in a ring: this header, then len bytes of unit, padded to 16 bytes. */
struct wanem_entry {
    uint32_t len;        /* unit bytes (vnet header + IP packet) */
    uint32_t segs : 24;  /* wire segments it carries */
    uint32_t proto : 8;  /* enum wanem_proto */
    uint64_t arrival_ns; /* when it was read */
    uint64_t release_ns; /* when it is due */
    uint64_t seq;        /* arrival order in its direction */
    uint8_t data[];
};

struct wanem_ring {
    uint8_t *buf;
    size_t cap;     /* bytes */
    size_t head;    /* oldest entry */
    size_t tail;    /* where the next entry goes */
    size_t wrap_at; /* when the tail has wrapped: where the entries before the wrap end */
    size_t used;    /* bytes held, the gap left at a wrap included */
    uint32_t count; /* entries held */
    size_t res_off; /* the last reservation */
    bool res_wrap;  /* ... starts at 0 after a wrap */
};

/* bytes one entry of a len-byte unit takes */
size_t wanem_ring_need(size_t len);
int wanem_ring_init(struct wanem_ring *r, size_t cap);
void wanem_ring_free(struct wanem_ring *r);
/* Room for an entry of a len-byte unit at the tail, contiguous; NULL when the ring is too
 * full. Nothing changes until wanem_ring_commit; a second reserve replaces the first. */
struct wanem_entry *wanem_ring_reserve(struct wanem_ring *r, size_t len);
/* Keeps the reserved entry, whose len field the caller has set. */
void wanem_ring_commit(struct wanem_ring *r);
/* the oldest entry, or NULL when empty */
struct wanem_entry *wanem_ring_head(const struct wanem_ring *r);
void wanem_ring_pop(struct wanem_ring *r);

/* ---- wanem_model.c ---------------------------------------------------------------------- */

/* splitmix64: small, fast, and the same sequence for the same seed on every machine */
struct wanem_rng {
    uint64_t s;
};
void wanem_rng_seed(struct wanem_rng *g, uint64_t seed);
uint64_t wanem_rng_next(struct wanem_rng *g);
/* uniform in [0, 1) with 53 random bits */
double wanem_rng_unit(struct wanem_rng *g);

/* Loss drawn once per wire segment: either every Nth segment of the direction (counted
 * across packets), or each segment independently with probability p from a seeded source. */
struct wanem_loss {
    double p;         /* 0..1 */
    uint64_t every;   /* 0: off */
    uint64_t counted; /* segments seen so far */
    struct wanem_rng rng;
};
/* Whether the next segment is lost. */
bool wanem_loss_draw(struct wanem_loss *l);
bool wanem_loss_active(const struct wanem_loss *l);

/* ---- the relay (wanem_relay.c) ---------------------------------------------------------- */

/* What one direction does to its packets. */
struct wanem_dir_conf {
    uint64_t delay_ns;
    uint64_t jitter_ns;  /* release = arrival + delay + uniform(-jitter, +jitter), in order */
    double loss;         /* per segment, 0..1 */
    uint64_t loss_every; /* every Nth segment instead */
    double reorder;      /* fraction of packets held back by reorder_gap_ns */
    uint64_t reorder_gap_ns;
};

struct wanem_conf {
    struct wanem_dir_conf dir[2]; /* 0: a -> b, 1: b -> a */
    uint64_t seed;
    size_t limit_bytes; /* per direction */
    uint32_t limit_packets;
    uint64_t slack_ns; /* a release later than due by more is counted late */
};

/* Counters of one direction; segments are packets on the wire (a super-packet of 45 TCP
 * segments counts 45). */
struct wanem_counters {
    uint64_t reads, read_bytes;    /* units read from the device, their bytes */
    uint64_t segments, wire_bytes; /* wire packets and their IP bytes */
    uint64_t super_packets, unsplittable;
    uint64_t injected[WANEM_P_COUNT];    /* segments dropped by the loss model, by protocol */
    uint64_t queue_drops[WANEM_P_COUNT]; /* segments dropped: the queue limit was reached */
    uint64_t queue_drop_bytes;
    uint64_t split_units;                   /* super-packets cut because some segments were lost */
    uint64_t reorder_held;                  /* packets held back by the reorder gap */
    uint64_t reordered;                     /* ... of which a later one of its protocol overtook */
    uint64_t reordered_segs[WANEM_P_COUNT]; /* their segments, by protocol */
    uint64_t reorder_pool_full;             /* held-back packets that stayed in order: pool full */
    uint64_t writes, write_bytes, write_segments;
    uint64_t write_errors; /* segments the other device refused */
    int write_errno;       /* ... the last time */
    uint64_t late;         /* released later than due by more than the slack */
    uint64_t late_hist[6]; /* lateness <50, <100, <200, <500, <1000 us, more */
    uint64_t late_sum_ns, late_max_ns;
    uint64_t hold_sum_ns, hold_min_ns, hold_max_ns; /* read to write, per write */
    uint64_t queue_max_bytes, queue_max_packets;
    uint64_t discarded_at_exit; /* segments still held when it stopped */
};

struct wanem_dir {
    const struct wanem_dir_conf *conf;
    int rfd, wfd;           /* reads from one device, writes into the other */
    struct wanem_ring ring; /* held packets in release order */
    uint8_t *pool;          /* packets held back to be reordered, pool_n slots */
    uint32_t pool_n, pool_used;
    struct wanem_loss loss;
    struct wanem_rng rng; /* jitter and reorder draws */
    uint64_t last_release_ns;
    uint64_t seq;                         /* arrival numbers */
    uint64_t released_seq[WANEM_P_COUNT]; /* the highest released + 1, by protocol */
    struct wanem_counters c;
};

struct wanem_relay {
    struct wanem_conf conf;
    struct wanem_dir dir[2];
    int ep, tfd, sigfd, hfd; /* epoll, release timer, signals, 1 Hz housekeeping */
    uint64_t armed_ns;       /* the timer's expiry, 0 when disarmed */
    uint64_t armed_at_ns;    /* when it was set */
    /* how late timer wake-ups come: the last 64, and their 75th percentile, by which the
     * timer is armed before a packet is due (a wake-up that comes early spins the rest) */
    uint32_t wake_ns[64];
    uint32_t wake_n;
    uint64_t wake_est_ns;
    uint64_t spin_ns; /* time spent waiting out early wake-ups */
    uint64_t start_ns;
    uint8_t *scratch;                   /* a unit that did not go straight into a ring */
    uint8_t drop[WANEM_MAX_IP / 8 + 1]; /* one super-packet's lost segments, a bit each */
};

/* Sets up both directions over the two device fds (non-blocking) and the event loop's fds;
 * -1 with a message in err. */
int wanem_relay_init(struct wanem_relay *rl, const struct wanem_conf *conf, int fd_a, int fd_b,
                     char *err, size_t errlen);
/* What the loop calls back: report on SIGUSR1; keep_going once a second (false: stop, the
 * message in err). */
struct wanem_hooks {
    void (*report)(struct wanem_relay *rl, void *ctx);
    bool (*keep_going)(void *ctx, char *err, size_t errlen);
    void *ctx;
};

/* Runs until SIGTERM, SIGINT or SIGHUP, or keep_going says stop (0), or a device error (-1);
 * a message in err for the last two. */
int wanem_relay_run(struct wanem_relay *rl, const struct wanem_hooks *hooks, char *err,
                    size_t errlen);
/* Counts what is still held as discarded and frees everything. */
void wanem_relay_fini(struct wanem_relay *rl);

/* ---- wanem_stats.c ---------------------------------------------------------------------- */

/* The counters and settings as a JSON document (malloc'd), NULL when out of memory. */
char *wanem_stats_json(const struct wanem_relay *rl, const char *const dev[2],
                       const char *const ns[2]);

#endif
