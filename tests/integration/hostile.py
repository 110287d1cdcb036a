#!/usr/bin/env python3
"""Hostile clients for netrig serve (tests/integration/hostile_*.sh): each subcommand plays a
client that lies or misbehaves in one way, measures what the daemon did about it by its own
clock, and prints one JSON object. Every loop and every socket is bounded in time.

  trickle PORT DUR [--reverse]      a stream test that never says stop; forward: one byte
                                    every 50 ms on its data connection; reverse: reads
                                    everything. Prints when the daemon ended the data path.
  flood PORT DUR                    a forward stream test that ignores the pacing named in
                                    accept and writes as fast as it can: bytes the daemon took,
                                    and when it stopped taking them.
  hello PORT JSON_PARAMS            sends a hello, prints the daemon's answer (accept or error)
                                    and, when accepted, keeps the control connection SECS
                                    (--hold) without opening data connections; --src ADDR:
                                    from that address.
  probes PORT GAP                   a test that answers ready with time probes GAP seconds
                                    apart, never start: when the daemon gave up.
  spoof PORT VICTIM KIND [answers]  a UDP test (KIND: stream-reverse, rr) whose hellos carry
                                    VICTIM as their source (a raw socket: root, in a namespace),
                                    then the same test's requests spoofed: bytes the daemon
                                    sent toward VICTIM (counted on lo with a packet socket).
                                    answers: answers are expected (a control): wait for the
                                    first one (at most 10 s) before stopping the test.
  i3spoof PORT VICTIM SECS          iperf3 UDP connect datagrams from VICTIM's address (raw),
                                    every 5 ms: bytes the daemon sent toward VICTIM.
  idle PORT N SECS FIRST_ADDR       N idle connections from N/25 source addresses from
                                    FIRST_ADDR on (127.x.y.z), held SECS seconds.
  i3slow PORT STREAMS GAP [--src A] an iperf3 UDP client opening STREAMS streams GAP seconds
                                    apart (from address A): when the daemon refused the set-up.
  run PORT TARGET                   a controller's run request toward TARGET: the answer.
  forge PORT                        a hello whose test name holds a newline and an escape.
  scrapeflood MPORT SECS ADDRS CONNS  CONNS connections from each of ADDRS addresses
                                    (127.0.2.x) pipelining GET /metrics, reconnecting when
                                    closed, for SECS: requests sent, 200s and 429s, bytes got.
  echo PORT                         a hello whose test name holds a newline, ESC and a byte that
                                    is not UTF-8: whether the daemon's answer has them raw.
  fakeserver SECS                   a fake netrig server on 127.0.0.1 (its port printed first)
                                    answering every hello with an error text holding a
                                    forged line, ESC[31m and invalid UTF-8; two clients, SECS
                                    at most.
  authflood PORT SECS CONNS SRC USER  CONNS connections at once from SRC, each a hello as USER
                                    and a wrong answer to the challenge, again and again for
                                    SECS: attempts answered, and the slowest answer.
  crrsteal PORT SRC                 a crr test from 127.0.0.1, then a request to its crr port
                                    from SRC and one from 127.0.0.1: bytes each got back.
"""
import json
import os
import select
import socket
import struct
import sys
import threading
import time

HOST = "127.0.0.1"


def frame(obj):
    payload = json.dumps(obj).encode()
    return b"NRG\x01" + struct.pack(">I", len(payload)) + payload


def recv_exact(s, n, deadline):
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        s.settimeout(left)
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def recv_msg(s, timeout=10.0):
    deadline = time.monotonic() + timeout
    hdr = recv_exact(s, 8, deadline)
    if hdr[:4] != b"NRG\x01":
        raise ValueError("bad frame %r" % hdr)
    (n,) = struct.unpack(">I", hdr[4:])
    return json.loads(recv_exact(s, n, deadline))


def control(port, src=None, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if src:
        s.bind((src, 0))
    s.settimeout(timeout)
    s.connect((HOST, port))
    return s


def params(**kw):
    p = {"flows": 1, "threads": 1, "duration_s": 1.0, "interval_s": 1.0, "test": "stream",
         "direction": "forward", "write_size": 131072}
    p.update(kw)
    return p


def hello(s, p):
    s.sendall(frame({"type": "hello", "proto": 1, "netrig_version": "hostile", "test": p["test"],
                     "params": p}))
    return recv_msg(s)


def data_conn(port, test_id, flow):
    d = socket.create_connection((HOST, port), timeout=5)
    d.sendall(b"NRDT" + bytes.fromhex(test_id) + struct.pack(">II", flow, 0))
    return d


def start_test(port, p, src=None):
    """hello, data connections, ready, start: (control, [data sockets], accept)."""
    c = control(port, src)
    acc = hello(c, p)
    if acc.get("type") != "accept":
        raise RuntimeError("refused: %s" % acc)
    n = p["flows"] * (2 if p.get("direction") == "bidir" else 1)
    ds = [data_conn(port, acc["test_id"], i) for i in range(n)]
    m = recv_msg(c)
    if m.get("type") != "ready":
        raise RuntimeError("no ready: %s" % m)
    c.sendall(frame({"type": "start"}))
    return c, ds, acc


def out(obj):
    print(json.dumps(obj), flush=True)


# ---------------------------------------------------------------- the subcommands


def cmd_trickle(port, dur, reverse=False):
    """The daemon must end the data path by duration + 2 s, whatever we send."""
    p = params(duration_s=dur, direction="reverse" if reverse else "forward")
    c, ds, _ = start_test(port, p)
    d = ds[0]
    t0 = time.monotonic()
    end_at = None
    got = sent = 0
    d.setblocking(False)
    while time.monotonic() - t0 < dur + 30:
        try:
            if reverse:
                r, _, _ = select.select([d], [], [], 0.05)
                if r:
                    b = d.recv(1 << 20)
                    if not b:
                        end_at = time.monotonic() - t0
                        break
                    got += len(b)
            else:
                d.send(b"x")
                sent += 1
                r, _, _ = select.select([d], [], [], 0.05)
                if r and not d.recv(4096):  # the daemon's FIN: it shut the path down
                    end_at = time.monotonic() - t0
                    break
        except (BlockingIOError, InterruptedError):
            time.sleep(0.01)
        except OSError:
            end_at = time.monotonic() - t0
            break
    # what the control connection says (result or nothing)
    kind = None
    try:
        kind = recv_msg(c, 5).get("type")
    except Exception as e:  # noqa: BLE001 - any end will do, we report it
        kind = "none (%s)" % type(e).__name__
    out({"ended_after_s": end_at, "duration_s": dur, "bytes_sent": sent, "bytes_got": got,
         "control": kind})


def cmd_flood(port, dur):
    """A forward stream that ignores the pacing: how much the daemon takes, and when it ends."""
    p = params(duration_s=dur, write_size=1 << 20)
    c, ds, acc = start_test(port, p)
    d = ds[0]
    buf = b"y" * (1 << 20)
    t0 = time.monotonic()
    total = 0
    samples = []
    end_at = None
    d.settimeout(0.2)
    while time.monotonic() - t0 < dur + 30:
        try:
            total += d.send(buf)
        except socket.timeout:
            pass
        except OSError:
            end_at = time.monotonic() - t0
            break
        samples.append((time.monotonic() - t0, total))
    msg = None
    try:
        msg = recv_msg(c, 3)
    except Exception:  # noqa: BLE001
        pass
    first = next((b for t, b in samples if t >= 1.0), total)
    out({"ended_after_s": end_at, "bytes": total, "bytes_first_s": first,
         "flow_rate_limit_bps": acc.get("flow_rate_limit_bps"),
         "control": msg.get("type") if msg else None,
         "error": msg.get("message") if msg and msg.get("type") == "error" else None})


def cmd_hello(port, pjson, hold=0.0, src=None):
    c = control(port, src)
    m = hello(c, json.loads(pjson))
    out({"type": m.get("type"), "code": m.get("code"), "message": m.get("message")})
    if m.get("type") == "accept" and hold > 0:
        time.sleep(hold)
    c.close()


def cmd_probes(port, gap):
    c = control(port)
    acc = hello(c, params(duration_s=1))
    ds = [data_conn(port, acc["test_id"], 0)]
    assert recv_msg(c).get("type") == "ready"
    t0 = time.monotonic()
    n = 0
    ended = None
    while time.monotonic() - t0 < 60:
        time.sleep(gap)
        try:
            c.sendall(frame({"type": "time"}))
            m = recv_msg(c, 5)
            if m.get("type") != "time":
                ended = time.monotonic() - t0
                break
            n += 1
        except Exception:  # noqa: BLE001
            ended = time.monotonic() - t0
            break
    out({"probes": n, "ended_after_s": ended})
    for d in ds:
        d.close()


SPOOF_PORT = 40000  # the source port of every spoofed datagram: replies go there


def count_udp_to(addr, dport, stop, result, ready=None):
    """Packets and bytes on lo toward addr:dport (IPv4, UDP) until stop is set; then the
    packets already queued on the socket are counted too. Sets ready once it listens."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    s.bind(("lo", 0))
    s.settimeout(0.1)
    if ready is not None:
        ready.set()
    want = socket.inet_aton(addr)
    draining = False
    while True:
        if not draining and stop.is_set():
            draining = True
            s.setblocking(False)  # what is queued, then no more waiting
        try:
            pkt, meta = s.recvfrom(65600)
        except socket.timeout:
            continue
        except BlockingIOError:
            break  # stopped, and nothing left queued
        if meta[2] == socket.PACKET_OUTGOING:
            continue  # lo shows each packet twice: count it once
        ip = pkt[14:]
        if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != 17 or ip[16:20] != want:
            continue
        ihl = (ip[0] & 15) * 4
        if struct.unpack(">H", ip[ihl + 2:ihl + 4])[0] != dport:
            continue
        result["packets"] += 1
        result["bytes"] += len(ip)
    s.close()


def start_counter(addr, dport):
    """The counting thread, started and listening; returns (thread, stop event, result)."""
    res = {"packets": 0, "bytes": 0}
    stop, ready = threading.Event(), threading.Event()
    th = threading.Thread(target=count_udp_to, args=(addr, dport, stop, res, ready))
    th.start()
    if not ready.wait(10):
        raise SystemExit("the packet counter did not start within 10 s")
    return th, stop, res


def raw_udp(src, sport, dst, dport, payload):
    """A UDP datagram with a source address of our choosing (IP_HDRINCL)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    s.sendto(ip + udp, (dst, 0))
    s.close()


def cmd_spoof(port, victim, kind, expect="none"):
    """expect "answers": the caller expects the daemon to answer (the positive control): once
    the requests are sent, wait (at most 10 s) until the first answer is counted, rather than
    a fixed half second a busy host may not give the daemon."""
    th, stop, res = start_counter(victim, SPOOF_PORT)
    if kind == "rr":
        p = params(test="rr", udp=True, req_size=1, resp_size=60000, duration_s=2.0)
    else:
        p = params(udp=True, direction="reverse", udp_rate_bps=50_000_000, write_size=1400,
                   duration_s=2.0)
    c = control(port)
    acc = hello(c, p)
    answer = None
    if acc.get("type") == "accept":
        tid = bytes.fromhex(acc["test_id"])
        uport = acc["udp_ports"][0]
        hello_dg = b"NRDT" + tid + struct.pack(">II", 0, 0)
        for i in range(20):  # hellos from the victim's address
            raw_udp(victim, SPOOF_PORT, HOST, uport, hello_dg)
            time.sleep(0.05)
        try:
            answer = recv_msg(c, 8)
        except Exception as e:  # noqa: BLE001
            answer = {"type": "none", "message": type(e).__name__}
        if answer.get("type") == "ready":  # taken: start, and requests from that address too
            c.sendall(frame({"type": "start"}))
            for i in range(200):
                raw_udp(victim, SPOOF_PORT, HOST, uport, struct.pack(">Q", i))
            if expect == "answers":
                deadline = time.monotonic() + 10
                while res["packets"] == 0 and time.monotonic() < deadline:
                    time.sleep(0.02)
            else:
                time.sleep(0.5)  # the window a wrong daemon has to answer the victim
            c.sendall(frame({"type": "stop"}))
            try:
                recv_msg(c, 5)
            except Exception:  # noqa: BLE001 - the result or not, the count is what matters
                pass
    # the daemon has ended the test (or refused it): what it sent is queued on the counter's
    # socket, which is drained before the thread ends
    stop.set()
    th.join()
    out({"accept": acc.get("type"), "then": answer.get("type") if answer else None,
         "code": answer.get("code") if answer else None,
         "victim_packets": res["packets"], "victim_bytes": res["bytes"]})


def cmd_i3spoof(port, victim, secs):
    """iperf3's UDP connect datagram ("9876") from victim's address, every 5 ms for secs, at
    the daemon's port: what the daemon sent toward victim meanwhile."""
    th, stop, res = start_counter(victim, SPOOF_PORT)
    t0 = time.monotonic()
    sent = 0
    while time.monotonic() - t0 < secs:
        raw_udp(victim, SPOOF_PORT, HOST, port, b"9876")
        sent += 1
        time.sleep(0.005)
    time.sleep(0.3)
    stop.set()
    th.join()
    out({"spoofed": sent, "victim_packets": res["packets"], "victim_bytes": res["bytes"]})


def cmd_idle(port, n, secs, first):
    base = [int(x) for x in first.split(".")]
    socks = []
    failed = 0
    for i in range(n):
        a = base[:]
        a[3] += i // 25
        a[2] += a[3] // 250
        a[3] = a[3] % 250 + 1 if a[3] >= 250 else a[3]
        s = socket.socket()
        try:
            s.bind(("%d.%d.%d.%d" % tuple(a), 0))
            s.setblocking(False)
            s.connect_ex((HOST, port))
            socks.append(s)
        except OSError:
            failed += 1
            s.close()
    print(json.dumps({"opened": len(socks), "failed": failed}), flush=True)
    time.sleep(secs)
    for s in socks:
        s.close()


def cmd_i3slow(port, streams, gap, src=None):
    """iperf3's exchange by hand: cookie, parameters, then UDP streams too slowly."""
    cookie = (b"hostile" + bytes(97 + b % 26 for b in os.urandom(29))) + b"\0"
    c = socket.create_connection((HOST, port), timeout=15,
                                 source_address=(src, 0) if src else None)
    c.sendall(cookie)
    t0 = time.monotonic()
    st = c.recv(1)
    if st != b"\x09":
        out({"error": "expected PARAM_EXCHANGE, got %r" % st})
        return
    pj = json.dumps({"udp": True, "time": 2, "parallel": streams, "len": 1400,
                     "bandwidth": 1000000}).encode()
    c.sendall(struct.pack(">I", len(pj)) + pj)
    st = c.recv(1)
    if st != b"\x0a":
        out({"error": "expected CREATE_STREAMS, got %r" % st})
        return
    opened = 0
    c.setblocking(False)
    ended = None
    state = None
    us = []
    while time.monotonic() - t0 < 120 and opened < streams:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if src:
            u.bind((src, 0))
        u.connect((HOST, port))
        u.send(b"9876")
        us.append(u)
        opened += 1
        r, _, _ = select.select([c], [], [], gap)
        if r:
            try:
                state = c.recv(1)
            except OSError:
                state = b""
            ended = time.monotonic() - t0
            break
    out({"opened": opened, "ended_after_s": ended,
         "state": state[0] - 256 if state and state[0] > 127 else (state[0] if state else None)})
    for u in us:
        u.close()


def cmd_run(port, target):
    c = control(port)
    c.sendall(frame({"type": "run", "proto": 1, "target": target, "test": "stream",
                     "params": params(duration_s=0.5)}))
    t0 = time.monotonic()
    try:
        m = recv_msg(c, 60)
    except Exception as e:  # noqa: BLE001
        m = {"type": "none", "message": type(e).__name__}
    out({"type": m.get("type"), "code": m.get("code"), "status": m.get("status"),
         "message": m.get("message"), "after_s": round(time.monotonic() - t0, 2)})


def cmd_forge(port):
    c = control(port)
    c.sendall(frame({"type": "hello", "proto": 1, "test": "x\nFORGED netrig: admin logged in\x1b[2J",
                     "params": params()}))
    try:
        m = recv_msg(c)
    except Exception:  # noqa: BLE001
        m = {}
    out({"type": m.get("type"), "code": m.get("code")})


def crr_ask(addr, port, src, size):
    """A request on a fresh connection to addr:port from src: the bytes answered within 1 s."""
    got = 0
    try:
        d = socket.socket()
        d.bind((src, 0))
        d.settimeout(1)
        d.connect((addr, port))
        d.sendall(b"q" * size)
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline:
            chunk = d.recv(65536)
            if not chunk:
                break
            got += len(chunk)
    except OSError:
        pass
    return got


def cmd_crrsteal(port, src):
    c = control(port)
    acc = hello(c, params(test="crr", duration_s=4.0, req_size=64, resp_size=65536))
    if acc.get("type") != "accept":
        out({"refused": acc})
        return
    m = recv_msg(c)
    c.sendall(frame({"type": "start"}))
    crr = acc["crr_port"]
    out({"ready": m.get("type"), "crr_port": crr,
         "stranger_bytes": crr_ask(HOST, crr, src, 64),
         "client_bytes": crr_ask(HOST, crr, HOST, 64)})


def cmd_scrapeflood(mport, secs, addrs, conns):
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 2000
    tot = {"connections": 0, "bytes": 0, "ok": 0, "too_many": 0}
    lock = threading.Lock()
    end = time.monotonic() + secs

    def one(src):
        while time.monotonic() < end:
            got = b""
            try:
                s = socket.socket()
                s.bind((src, 0))
                s.settimeout(1)
                s.connect((HOST, mport))
                s.sendall(req)
                while time.monotonic() < end:
                    chunk = s.recv(1 << 20)
                    if not chunk:
                        break
                    got += chunk
            except OSError:
                time.sleep(0.01)
            finally:
                s.close()
            with lock:
                tot["connections"] += 1
                tot["bytes"] += len(got)
                tot["ok"] += got.count(b"HTTP/1.1 200")
                tot["too_many"] += got.count(b"HTTP/1.1 429")

    ts = [threading.Thread(target=one, args=("127.0.2.%d" % (i // conns + 1),), daemon=True)
          for i in range(addrs * conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(secs + 5)
    tot["seconds"] = secs
    out(tot)


EVIL = b"refused\nnetrig: FORGED line\x1b[31m red \xff\xfe\xc2\x9b end"


def raw_frame(payload):
    return b"NRG\x01" + struct.pack(">I", len(payload)) + payload


def cmd_echo(port):
    c = control(port)
    c.sendall(raw_frame(b'{"type":"hello","proto":1,"netrig_version":"hostile","test":"' +
                        EVIL.replace(b"\n", b"\\n").replace(b"\x1b", b"\\u001b") +
                        b'","params":{}}'))
    deadline = time.monotonic() + 10
    try:
        hdr = recv_exact(c, 8, deadline)
        body = recv_exact(c, struct.unpack(">I", hdr[4:])[0], deadline)
    except Exception as e:  # noqa: BLE001
        out({"error": type(e).__name__})
        return
    try:
        text = json.loads(body.decode("utf-8")).get("message", "")
        utf8 = True
    except ValueError:
        text, utf8 = "", False
    raw = [ch for ch in text if ord(ch) < 0x20 or 0x7f <= ord(ch) < 0xa0]
    out({"utf8": utf8, "raw_controls": len(raw), "message": text})


def cmd_fakeserver(secs):
    ls = socket.socket()
    ls.bind((HOST, 0))
    ls.listen(8)
    print(ls.getsockname()[1], flush=True)
    end = time.monotonic() + secs
    for _ in range(2):  # the two clients of hostile_peers.sh
        ls.settimeout(max(0.1, end - time.monotonic()))
        try:
            c, _ = ls.accept()
        except OSError:
            break
        try:
            recv_msg(c, 5)
            c.sendall(raw_frame(b'{"type":"error","code":"limit","message":"' +
                                EVIL.replace(b"\n", b"\\n").replace(b"\x1b", b"\\u001b") +
                                b'"}'))
        except Exception:  # noqa: BLE001
            pass
        c.close()


def cmd_authflood(port, secs, conns, src, user):
    tot = {"attempts": 0, "refused": 0, "slowest_s": 0.0}
    lock = threading.Lock()
    end = time.monotonic() + secs

    def one():
        while time.monotonic() < end:
            t0 = time.monotonic()
            m = {}
            try:
                c = control(port, src)
                p = params()
                c.sendall(frame({"type": "hello", "proto": 1, "netrig_version": "hostile",
                                 "test": "stream", "user": user, "params": p}))
                ch = recv_msg(c)
                if ch.get("type") == "challenge":
                    c.sendall(frame({"type": "auth", "user": user, "mac": "00" * 32}))
                    m = recv_msg(c)
                c.close()
            except Exception:  # noqa: BLE001
                time.sleep(0.01)
            with lock:
                tot["attempts"] += 1
                tot["refused"] += m.get("code") == "auth_failed"
                tot["slowest_s"] = max(tot["slowest_s"], round(time.monotonic() - t0, 3))

    ts = [threading.Thread(target=one, daemon=True) for _ in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(secs + 10)
    tot["seconds"] = secs
    out(tot)


def main():
    a = sys.argv[1:]
    cmd, port = a[0], int(a[1])
    if cmd == "trickle":
        cmd_trickle(port, float(a[2]), "--reverse" in a)
    elif cmd == "flood":
        cmd_flood(port, float(a[2]))
    elif cmd == "hello":
        opt = dict(zip(a[3::2], a[4::2]))
        cmd_hello(port, a[2], float(opt.get("--hold", 0.0)), opt.get("--src"))
    elif cmd == "probes":
        cmd_probes(port, float(a[2]))
    elif cmd == "spoof":
        cmd_spoof(port, a[2], a[3], a[4] if len(a) > 4 else "none")
    elif cmd == "i3spoof":
        cmd_i3spoof(port, a[2], float(a[3]))
    elif cmd == "idle":
        cmd_idle(port, int(a[2]), float(a[3]), a[4])
    elif cmd == "i3slow":
        cmd_i3slow(port, int(a[2]), float(a[3]), a[5] if len(a) > 5 and a[4] == "--src" else None)
    elif cmd == "run":
        cmd_run(port, a[2])
    elif cmd == "forge":
        cmd_forge(port)
    elif cmd == "scrapeflood":
        cmd_scrapeflood(port, float(a[2]), int(a[3]), int(a[4]))
    elif cmd == "echo":
        cmd_echo(port)
    elif cmd == "fakeserver":
        cmd_fakeserver(float(a[1]))
    elif cmd == "authflood":
        cmd_authflood(port, float(a[2]), int(a[3]), a[4], a[5])
    elif cmd == "crrsteal":
        cmd_crrsteal(port, a[2])
    else:
        sys.exit("unknown command %s" % cmd)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
