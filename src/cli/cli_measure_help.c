/* cli_measure_help: the help texts of the test kinds' commands (stream, rr, crr, mptcp). */
#include "cli.h"

#include "params.h"
#include "sock.h"
#include "test_kind.h"

static const char help_common[] =
    "connection:\n"
    "  -c, --client HOST       server to test against: HOST, HOST:PORT or [IPV6]:PORT;\n"
    "                          repeat -c to test several servers at once, started\n"
    "                          together; without -c a server runs inside this process\n"
    "  -p, --port PORT         server port (default %d)\n"
    "  -4, -6                  IPv4 or IPv6 only\n"
    "  -B, --bind ADDR         local address for every connection\n"
    "      --bind-dev IFACE    send and receive only through this interface\n"
    "                          (SO_BINDTODEVICE)\n"
    "      --timeout TIME      connect and control-reply timeout (default 10s)\n"
    "      --from HOST[:PORT]  third party: the daemon at HOST runs the test toward -c\n"
    "                          (it must allow us with --allow-third-party)\n"
    "      --user NAME         authenticate as NAME (secret from $NETRIG_SECRET or\n"
    "      --credentials FILE  a 'user secret' file of mode 0600)\n"
    "timing and placement:\n"
    "  -t, --time TIME         duration, after the omitted warm-up (default 10s)\n"
    "  -O, --omit TIME         warm-up left out of the results (default 0)\n"
    "  -i, --interval TIME     interval reports (default 1s; 0 = none)\n"
    "  -S, --tos N             IP TOS byte of the data packets, 0-255 (52, 0x34 or 064);\n"
    "                          the IPv6 traffic class on IPv6; the server's too\n"
    "      --dscp CODE         the same as a DSCP: AF11..AF43, EF, VA, LE, CS0..CS7 or 0-63\n"
    "  -P, --parallel N        flows (max %d)\n"
    "  -T, --threads N         client worker threads, each one epoll loop (default 1)\n"
    "      --server-threads N  server worker threads (default: as -T)\n"
    "  -A, --affinity CPUS     pin client workers round-robin to CPUS (0-3,8 or auto)\n"
    "      --server-cpus CPUS  pin server workers; auto = CPUs local to the NIC\n"
    "      --title TEXT        label stored with the results\n"
    "      --sample TIME       each flow's bytes and TCP_INFO this often, stored with the\n"
    "                          run (default: the interval; at least 10ms; 0 = off)\n"
    "output:\n"
    "  -J, --json              one JSON document at the end (docs/json.md)\n"
    "      --samples           add the --sample time series to the JSON document\n"
    "      --json-stream       one JSON object per line per interval, then the document\n"
    "      --live              redraw one table in place every interval (default on a\n"
    "                          terminal for runs over 10 s, never when piped or -J)\n"
    "      --no-live           interval lines even on a terminal\n"
    "      --logfile FILE      append all output, errors too, to FILE (as iperf3)\n"
    "      --timestamps[=FMT]  start every line of the text report with the local time,\n"
    "                          strftime FMT (default '%%c ', as iperf3)\n"
    "      --forceflush        write every line as it ends (interval lines always are)\n"
    "history:\n"
    "      --db PATH           save the run in this history database (default\n"
    "                          ~/.local/share/netrig/history.db; see 'netrig help history')\n"
    "      --no-save           do not save the run\n";

static const char help_units[] =
    "\nSizes take K, M, G, T (powers of 1024); rates take K, M, G, T bits/s (powers of\n"
    "1000) or a B suffix for bytes/s (100MB = 800 Mbit/s); times take s, ms, us, m, h.\n"
    "Exit status: 0 done, 1 failed or partial, 2 bad usage, 130 interrupted (partial\n"
    "results printed).\n";

static void help_stream(FILE *out)
{
    fprintf(out,
            "usage: netrig stream [-c HOST] [OPTIONS]\n"
            "\n"
            "Throughput between this host and a 'netrig serve' daemon: TCP by default, or paced\n"
            "UDP with -u (loss, jitter, one-way delay).\n"
            "\n");
    fprintf(out, help_common, SOCK_DEFAULT_PORT, PARAMS_MAX_FLOWS);
    fprintf(out,
            "stream:\n"
            "  -R, --reverse           server sends, client receives\n"
            "      --bidir             both directions at once (-P flows each way)\n"
            "  -n, --bytes SIZE        end after SIZE bytes (K, M, G, T: powers of 1024) over all\n"
            "                          flows, exactly (with --bidir: each way); with -t, the\n"
            "                          first limit reached ends the test\n"
            "  -k, --blocks N          end after N writes of -l bytes (UDP: N datagrams)\n"
            "  -b, --bitrate RATE[/N]  pace each flow in the application to RATE bits/s (TCP:\n"
            "                          N writes back to back per round; unpaced by default)\n"
            "                          --bidir -b UP,DOWN: UP for this host's flows, DOWN for\n"
            "                          the server's (e.g. -b 20M,100M; 0: unpaced)\n"
            "      --cport PORT        local port of the data flows: flow i uses PORT + i\n"
            "  -l, --length SIZE       bytes per write (default 1M, 128K with -Z; UDP: datagram,\n"
            "                          1400)\n"
            "  -w, --window SIZE       socket buffer (SO_SNDBUF/SO_RCVBUF) on both ends\n"
            "  -C, --congestion ALGO   congestion control (e.g. bbr, cubic, reno)\n"
            "  -M, --mss BYTES         TCP maximum segment size\n"
            "  -N, --nodelay           TCP_NODELAY on data flows\n"
            "      --fq-rate RATE      per-flow pacing (SO_MAX_PACING_RATE), bits/s: 500M, 2G\n"
            "      --notsent-lowat SIZE  unsent bytes a sending socket holds (TCP_NOTSENT_LOWAT);\n"
            "                          default: 128K where a thread takes turns over flows, else\n"
            "                          the kernel's; 0: the kernel's everywhere\n"
            "  -Z, --zerocopy          MSG_ZEROCOPY sends; sendfile() when the kernel would copy\n"
            "      --zerocopy-rx       receivers map the socket's pages (TCP_ZEROCOPY_RECEIVE),\n"
            "                          recv() for what cannot be mapped; both ends\n"
            "      --skip-rx-copy      receivers discard data in the kernel (MSG_TRUNC): measures\n"
            "                          the network and the sender; the receiver's copy is not\n"
            "                          counted\n"
            "      --mptcp             Multipath TCP data connections (IPPROTO_MPTCP): the report\n"
            "                          shows each flow's subflows and what each path carried\n"
            "UDP:\n"
            "  -u, --udp               paced UDP datagrams with sequence numbers and timestamps\n"
            "  -b, --bitrate RATE[/N]  per-flow rate (default 1M); N datagrams back to back\n"
            "                          (--bidir -b UP,DOWN: a rate each way)\n"
            "      --pps N             per-flow datagrams per second (instead of -b)\n"
            "      --dont-fragment     never fragment datagrams (IP_PMTUDISC_DO): over the path\n"
            "                          MTU they fail instead\n"
            "iperf3:\n"
            "      --iperf3            test against an iperf3 server ('iperf3 -s', default port\n"
            "                          5201): -P, -R, --bidir, -t, -O, -n, -k, -l, -w, -C, -M,\n"
            "                          -N, -Z, --fq-rate, -b, -S, -T, -A, -B; -u with -b\n");
    fputs(help_units, out);
}

static void help_rr(FILE *out)
{
    fprintf(out,
            "usage: netrig rr [-c HOST] [OPTIONS]\n"
            "\n"
            "Request/response latency and rate (netperf's TCP_RR): each flow sends a request and\n"
            "waits for the response; latency percentiles come from a log-linear histogram.\n"
            "\n");
    fprintf(out, help_common, SOCK_DEFAULT_PORT, PARAMS_MAX_FLOWS);
    fprintf(out,
            "request/response:\n"
            "  -r, --size REQ[,RESP]   request and response bytes (default 1,1)\n"
            "  -u, --udp               UDP request/response (a lost datagram counts as a timeout)\n"
            "      --depth N           transactions in flight per flow (default 1, closed loop)\n"
            "      --rate TPS          open loop: TPS transactions/s over all flows; latency\n"
            "                          counts from the intended send time\n"
            "      --txn-timeout TIME  give up on an unanswered transaction (default 2s)\n"
            "      --busy-poll         spin on the sockets instead of sleeping (each empty turn\n"
            "                          yields the CPU; sleeps for 20 ms after finding the CPU\n"
            "                          held by other work)\n"
            "      --histogram FILE    write the full latency distribution to FILE\n"
            "  -w, --window SIZE       socket buffers; -C ALGO congestion control\n"
            "      --cport PORT        local port of the flows: flow i uses PORT + i\n"
            "      --dont-fragment     UDP: never fragment datagrams (IP_PMTUDISC_DO)\n"
            "      --mptcp             TCP flows over Multipath TCP, their subflows reported\n");
    fputs(help_units, out);
}

static void help_crr(FILE *out)
{
    fprintf(out,
            "usage: netrig crr [-c HOST] [OPTIONS]\n"
            "\n"
            "Connection rate (netperf's TCP_CRR): each transaction connects, sends a request,\n"
            "reads the response and closes. The server accepts on one SO_REUSEPORT listener per\n"
            "worker thread and closes first, so TIME_WAIT stays on the server.\n"
            "\n");
    fprintf(out, help_common, SOCK_DEFAULT_PORT, PARAMS_MAX_FLOWS);
    fprintf(out, "connect/request/response:\n"
                 "  -r, --size REQ[,RESP]   request and response bytes (default 1,1)\n"
                 "      --connect-only      connect and close only: pure connection rate\n"
                 "      --txn-timeout TIME  give up on a transaction (default 2s)\n"
                 "      --busy-poll         spin on the sockets instead of sleeping (each empty\n"
                 "                          turn yields the CPU; sleeps for 20 ms after finding\n"
                 "                          the CPU held by other work)\n"
                 "      --histogram FILE    write the full latency distribution to FILE\n"
                 "  -C ALGO                 congestion control\n");
    fputs(help_units, out);
}

static void help_mptcp(FILE *out)
{
    fprintf(out,
            "usage: netrig mptcp [-c HOST] [OPTIONS]\n"
            "\n"
            "Throughput over Multipath TCP (IPPROTO_MPTCP), as 'netrig stream --mptcp': the\n"
            "report shows each flow's subflows, the path (addresses) of each and what it\n"
            "carried. The server's listener must be MPTCP ('netrig serve' opens one where its\n"
            "kernel has MPTCP); the paths are the kernel's path manager's ('ip mptcp').\n"
            "\n");
    fprintf(out, help_common, SOCK_DEFAULT_PORT, PARAMS_MAX_FLOWS);
    fprintf(out,
            "mptcp:\n"
            "  -R, --reverse           server sends, client receives\n"
            "      --bidir             both directions at once (-P flows each way)\n"
            "  -n, --bytes SIZE        end after SIZE bytes over all flows (with -t, the first\n"
            "                          limit reached ends the test)\n"
            "  -k, --blocks N          end after N writes of -l bytes\n"
            "  -b, --bitrate RATE[/N]  pace each flow in the application to RATE bits/s\n"
            "      --cport PORT        local port of the data flows: flow i uses PORT + i\n"
            "  -l, --length SIZE       bytes per write (default 1M)\n"
            "  -w, --window SIZE       socket buffer (SO_SNDBUF/SO_RCVBUF) on both ends\n"
            "  -C, --congestion ALGO   congestion control of the subflows (e.g. reno, cubic)\n"
            "  -M, --mss BYTES         TCP maximum segment size\n"
            "  -N, --nodelay           TCP_NODELAY on data flows\n"
            "      --notsent-lowat SIZE  unsent bytes a sending socket holds (see stream)\n"
            "      --skip-rx-copy      receivers discard data in the kernel (MSG_TRUNC)\n"
            "(MPTCP sockets take no -Z, --zerocopy-rx or --fq-rate; -u is not MPTCP)\n");
    fputs(help_units, out);
}

/* Each kind's command's help (a variant's is its command's). */
static void (*const help_of[TEST_KIND_COUNT])(FILE *out) = {
    [TEST_KIND_STREAM] = help_stream, [TEST_KIND_STREAM_UDP] = help_stream,
    [TEST_KIND_RR] = help_rr,         [TEST_KIND_RR_UDP] = help_rr,
    [TEST_KIND_CRR] = help_crr,       [TEST_KIND_STREAM_MPTCP] = help_mptcp,
    [TEST_KIND_RR_MPTCP] = help_rr,
};

void cli_help_measure(const struct test_kind *kind, FILE *out) { help_of[kind->id](out); }
