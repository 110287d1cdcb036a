/* cli_measure_data: the options of the measurement commands that shape the data a test moves:
 * -n/-k (a transfer of a fixed size), -b RATE[/BURST] (UDP's rate or TCP's application pacing,
 * settled once -u is known), -S/--dscp (the TOS byte), --cport, --bind-dev, --dont-fragment. */
#include "cli.h"
#include "test_kind.h"

#include "client.h"
#include "params.h"
#include "sock.h"
#include "units.h"

#include <string.h>

/* -n SIZE, -k COUNT: K, M, G, T as powers of 1024, as iperf3 reads them */
static int parse_limit(char opt, const char *arg, uint64_t *out)
{
    if (units_parse_size(arg, out) || *out == 0 || *out > PARAMS_MAX_LIMIT) {
        cli_error("invalid %s '%s' for -%c: use a count above 0 with an optional K, M, G or T "
                  "suffix (powers of 1024), e.g. -%c %s",
                  opt == 'n' ? "size" : "block count", arg, opt, opt, opt == 'n' ? "100M" : "1K");
        return -1;
    }
    return 0;
}

/* -S N or --dscp CODE: the TOS byte of the data packets (one of the two). */
static int parse_tos(int c, const char *arg, struct params *p, struct cli_data_opts *d)
{
    const char *name = c == 'S' ? "-S" : "--dscp";

    if (d->tos_opt && strcmp(d->tos_opt, name)) {
        cli_error("-S and --dscp both set the TOS byte: give one of them");
        return -1;
    }
    d->tos_opt = name;
    if (c == 'S' ? !params_parse_tos(arg, &p->tos) : !params_parse_dscp(arg, &p->tos))
        return 0;
    if (c == 'S')
        cli_error("invalid TOS '%s' for -S: use 0 to 255, in decimal, hex (0x34) or octal (064)",
                  arg);
    else
        cli_error("invalid DSCP '%s' for --dscp: use a name (AF11..AF43, EF, VA, LE, CS0..CS7) "
                  "or a number 0 to 63",
                  arg);
    return -1;
}

int cli_data_opt(int c, const char *arg, struct client_opts *o, struct cli_data_opts *d)
{
    char err[256];

    switch (c) {
    case 'n': return parse_limit('n', arg, &o->p.bytes_limit);
    case 'k': return parse_limit('k', arg, &o->p.blocks_limit);
    case 'S':
    case CLI_OPT_DSCP: return parse_tos(c, arg, &o->p, d);
    case CLI_OPT_CPORT:
        if (cli_parse_port(arg, &o->cport))
            return -1;
        if (!o->cport) {
            cli_error("invalid port '%s' for --cport: use 1 to 65535", arg);
            return -1;
        }
        return 0;
    case CLI_OPT_BIND_DEV:
        if (strlen(arg) >= sizeof(o->bind_dev) || sock_dev_check(arg, err, sizeof(err))) {
            cli_error("%s", strlen(arg) >= sizeof(o->bind_dev)
                                ? "interface name for --bind-dev is too long (15 at most)"
                                : err);
            return -1;
        }
        memcpy(o->bind_dev, arg, strlen(arg) + 1);
        return 0;
    case CLI_OPT_DONT_FRAGMENT: o->p.dont_fragment = true; return 0;
    default: return -1;
    }
}

/* One rate of -b: bits/s into *bps, 0 refused for UDP (it would send nothing). */
static int one_rate(const char *rate, bool udp, uint64_t *bps)
{
    if (cli_parse_rate("-b", rate, bps))
        return -1;
    if (*bps > 1000000000000000ULL) {
        cli_error("rate '%s' for -b is too high: at most 1000T", rate);
        return -1;
    }
    if (udp && !*bps) {
        cli_error("rate '%s' for -b sends nothing: give a rate above 0, e.g. 100M", rate);
        return -1;
    }
    return 0;
}

/* -b RATE[/BURST] or, with --bidir, -b UP,DOWN[/BURST], once -u is known: UDP's rate, or
 * TCP's application pacing (0: none); DOWN is the rate of the flows the server sends. */
static int apply_bitrate(struct params *p, const char *arg)
{
    const char *slash = strchr(arg, '/');
    size_t n = slash ? (size_t)(slash - arg) : strlen(arg);
    char rate[64], *comma;
    uint64_t bps, down = 0;
    uint32_t burst = 0;

    if (n == 0 || n >= sizeof(rate)) {
        cli_error("invalid rate '%s' for -b: use RATE, RATE/BURST or UP,DOWN, e.g. 200M, 1G/10 "
                  "or 20M,100M",
                  arg);
        return -1;
    }
    memcpy(rate, arg, n);
    rate[n] = '\0';
    comma = strchr(rate, ',');
    if (comma) {
        *comma++ = '\0';
        if (p->dir != PARAMS_DIR_BIDIR) {
            cli_error("-b %s gives two rates, which apply to --bidir only (UP from this host, "
                      "DOWN from the server): add --bidir or give one rate",
                      arg);
            return -1;
        }
        if (one_rate(comma, test_kind_is(p, TEST_KIND_DATAGRAMS), &down))
            return -1;
    }
    if (one_rate(rate, test_kind_is(p, TEST_KIND_DATAGRAMS), &bps) ||
        (slash && cli_parse_u32("-b RATE/BURST", slash + 1, 1, PARAMS_MAX_BURST, &burst)))
        return -1;
    p->burst = burst;
    p->down_rate_set = comma != NULL;
    p->down_rate_bps = down;
    if (test_kind_is(p, TEST_KIND_DATAGRAMS))
        p->udp_rate_bps = bps;
    else
        p->app_rate_bps = bps; /* 0: as fast as the socket takes it, as iperf3's -b 0 */
    return 0;
}

int cli_data_finish(struct client_opts *o, const struct cli_data_opts *d, bool third_party,
                    uint32_t ntargets)
{
    uint32_t n;

    if (d->bitrate && apply_bitrate(&o->p, d->bitrate))
        return -1;
    /* paced TCP writes 5 ms of the rate at a time (4K to 1M): 1 MiB writes at -b 1M would go
     * out one every 8 seconds */
    if ((o->p.app_rate_bps || o->p.down_rate_bps) && !test_kind_is(&o->p, TEST_KIND_UDP) &&
        !d->length_given) {
        uint64_t r = o->p.app_rate_bps, down = o->p.down_rate_bps;
        uint64_t w = (!r || (down && down < r) ? down : r) / 8 / 200; /* the slower way's */
        o->p.write_size = (uint32_t)(w < 4096 ? 4096 : w > 1048576 ? 1048576 : w);
    }
    /* -n/-k without -t: the transfer alone ends the test */
    if (params_has_limit(&o->p) && !d->time_given)
        o->p.duration_ns = 0;
    if ((o->cport || o->bind_dev[0]) && third_party) {
        cli_error("--cport and --bind-dev shape this host's sockets: with --from the daemon "
                  "there opens them; drop them");
        return -1;
    }
    if (o->cport && ntargets > 1) {
        cli_error("--cport with several servers would give their flows the same ports: test "
                  "one server at a time");
        return -1;
    }
    n = params_total_flows(&o->p);
    if (o->cport && (uint32_t)o->cport + n - 1 > 65535) {
        cli_error("--cport %u with %u flows runs past port 65535: use --cport %u or lower",
                  o->cport, n, 65536 - n);
        return -1;
    }
    return 0;
}
