#!/usr/bin/env python3
"""icmp_rtt.py ADDR COUNT INTERVAL_S: ICMP echo round-trip times with nanosecond resolution.

ping prints each time to three significant digits (0.1 ms from 10 ms on), too coarse to judge a
delay line to 0.2 ms by a median. This sends COUNT echo requests to ADDR (IPv4 or IPv6) every
INTERVAL_S seconds on average from a raw socket (each gap drawn uniformly from 0.5 to 1.5 times
INTERVAL_S: probes at a fixed period whose multiple is the path's delay would always meet the
emulator busy releasing an earlier probe), stamps each send with CLOCK_REALTIME just before sendto,
and takes each reply's receive time from the kernel (SO_TIMESTAMPNS), so neither this process's
scheduling nor Python's speed is in the figures. Prints one line, in milliseconds:
    min mean median interdecile_mean stdev replies
and exits 1 if any reply is missing (after waiting 3 s for the last ones), 2 on bad usage.
Needs root (raw sockets); run it in the sending namespace (ip netns exec)."""
import os
import random
import select
import socket
import statistics
import struct
import sys
import time

SO_TIMESTAMPNS = 35  # SCM_TIMESTAMPNS, the same number


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def main():
    if len(sys.argv) != 4:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    addr, count, interval = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    v6 = ":" in addr
    if v6:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        req_type, rep_type = 128, 129  # the kernel fills in the ICMPv6 checksum
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        req_type, rep_type = 8, 0
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.setblocking(False)
    ident = os.getpid() & 0xFFFF
    sent, rtt = {}, {}
    due = time.monotonic()
    deadline = None
    seq = 0
    while len(rtt) < count:
        now = time.monotonic()
        if seq < count and now >= due:
            due += interval * random.uniform(0.5, 1.5)
            payload = struct.pack("!Q", seq) + b"\0" * 48
            hdr = struct.pack("!BBHHH", req_type, 0, 0, ident, seq)
            if not v6:
                hdr = struct.pack("!BBHHH", req_type, 0, checksum(hdr + payload), ident, seq)
            sent[seq] = time.clock_gettime_ns(time.CLOCK_REALTIME)
            sock.sendto(hdr + payload, (addr, 0))
            seq += 1
            if seq == count:
                deadline = time.monotonic() + 3
            continue
        if deadline is not None and now > deadline:
            break
        wait = (due - now) if seq < count else (deadline - now)
        if not select.select([sock], [], [], max(wait, 0))[0]:
            continue
        while True:
            try:
                data, anc, _, _ = sock.recvmsg(2048, socket.CMSG_SPACE(16))
            except BlockingIOError:
                break
            if not v6:
                data = data[(data[0] & 15) * 4:]  # a raw IPv4 socket hands over the IP header
            if len(data) < 8:
                continue
            typ, _, _, rid, rseq = struct.unpack("!BBHHH", data[:8])
            if typ != rep_type or rid != ident or rseq not in sent or rseq in rtt:
                continue
            stamp = None
            for level, kind, value in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("qq", value[:16])
                    stamp = sec * 1000000000 + nsec
            if stamp is not None:
                rtt[rseq] = (stamp - sent[rseq]) / 1e6
    v = sorted(rtt.values())
    if not v:
        print("no replies", file=sys.stderr)
        return 1
    cut = len(v) // 10
    mid = v[cut:len(v) - cut]
    print("%.4f %.4f %.4f %.4f %.4f %d" % (v[0], statistics.fmean(v), statistics.median(v),
                                           statistics.fmean(mid), statistics.pstdev(v), len(v)))
    if len(v) != count:
        print("%d of %d replies" % (len(v), count), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
