#!/usr/bin/env python3
"""pktcap: counts the IP TOS bytes (IPv6 traffic classes) and don't-fragment flags of the TCP and
UDP packets with a payload on one interface, with an AF_PACKET socket (no tcpdump needed).

usage: pktcap.py IFACE PORT OUT.json
Prints "ready" on stdout once capturing; on SIGTERM (or after 120 s) writes OUT.json:
  {"packets": N, "classes": {"tcp4 to 0x28": n, "udp6 from 0xb8": n, ...},
   "udp4_df": n, "udp4_no_df": n}
where "to" means toward PORT, "from" from it, "other" neither (UDP data ports, for example), and
only packets with a payload count. Run it as root, in a network
namespace of the test's own so that nothing else is seen.
"""
import json
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4  # on loopback every packet is seen going out and coming in: count once


def parse(frame, port, out):
    if len(frame) < 14:
        return
    ethertype = struct.unpack("!H", frame[12:14])[0]
    ip = frame[14:]
    if ethertype == 0x0800 and len(ip) >= 20:
        ihl = (ip[0] & 0x0F) * 4
        tos, total = ip[1], struct.unpack("!H", ip[2:4])[0]
        df = bool(struct.unpack("!H", ip[6:8])[0] & 0x4000)
        proto, l4, fam = ip[9], ip[ihl:total], "4"
    elif ethertype == 0x86DD and len(ip) >= 40:
        vtf = struct.unpack("!I", ip[0:4])[0]
        tos, proto, fam, df = (vtf >> 20) & 0xFF, ip[6], "6", False
        l4 = ip[40 : 40 + struct.unpack("!H", ip[4:6])[0]]
    else:
        return
    if proto == 6 and len(l4) >= 20:
        name, payload = "tcp", len(l4) - (l4[12] >> 4) * 4
    elif proto == 17 and len(l4) >= 8:
        name, payload = "udp", len(l4) - 8
    else:
        return
    sport, dport = struct.unpack("!HH", l4[0:4])
    if payload <= 0:
        return
    way = "to" if dport == port else "from" if sport == port else "other"
    key = "%s%s %s 0x%02x" % (name, fam, way, tos)
    out["classes"][key] = out["classes"].get(key, 0) + 1
    out["packets"] += 1
    if name == "udp" and fam == "4":
        out["udp4_df" if df else "udp4_no_df"] += 1


def main():
    iface, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    out = {"packets": 0, "classes": {}, "udp4_df": 0, "udp4_no_df": 0}
    done = []
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.2)
    signal.signal(signal.SIGTERM, lambda *_: done.append(1))
    print("ready", flush=True)
    end = time.monotonic() + 120
    while not done and time.monotonic() < end:
        try:
            frame, addr = s.recvfrom(65600)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if addr[2] == PACKET_OUTGOING:
            parse(frame, port, out)
    with open(path, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
