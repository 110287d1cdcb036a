#!/usr/bin/env python3
"""Hostile clients for the soak test: for SECONDS, THREADS threads each open connections to
127.0.0.1:PORT and misbehave in one of several ways. Every loop and every socket is bounded in
time. Prints how many connections of each kind were made."""
import random
import socket
import struct
import sys
import threading
import time

PORT = int(sys.argv[1])
SECONDS = float(sys.argv[2])
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 8
counts = {}
lock = threading.Lock()


def conn(timeout=3.0):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
    s.settimeout(timeout)
    return s


def frame(payload):
    return b"NRG\x01" + struct.pack(">I", len(payload)) + payload


def garbage():
    with conn() as s:
        s.sendall(bytes(random.getrandbits(8) for _ in range(random.randint(1, 300))))


def huge_length():
    with conn() as s:
        s.sendall(b"NRG\x01" + struct.pack(">I", 0xFFFFFFFF))
        try:
            s.recv(4096)
        except OSError:
            pass


def truncated():
    with conn() as s:
        s.sendall(b"NRG\x01" + struct.pack(">I", 500) + b'{"type":"hello","pro')
        time.sleep(random.uniform(0, 1.0))


def slowloris():
    msg = frame(b'{"type":"hello","proto":1,"test":"stream","params":{}}')
    with conn(timeout=6) as s:
        for b in msg[: random.randint(1, 12)]:
            s.send(bytes([b]))
            time.sleep(0.4)


def reset():
    s = conn()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.sendall(frame(b'{"type":"hello","proto":1,"test":"stream","params":{"flows":2}}'))
    s.close()


def flood():
    socks = []
    try:
        for _ in range(30):
            socks.append(conn(timeout=1))
    except OSError:
        pass
    for s in socks:
        s.close()


def bad_params():
    with conn() as s:
        bad = random.choice([b'{"type":"hello","proto":1,"test":"stream","params":{"flows":"x"}}',
                             b'{"type":"hello","proto":1,"test":"stream","params":{"flows":1e9}}',
                             b'{"type":"hello","proto":9}', b'[1,2,3]', b'{"type":7}',
                             b'{"type":"hello"}{"type":"hello"}'])
        s.sendall(frame(bad))
        try:
            s.recv(4096)
        except OSError:
            pass


def stray_data():
    with conn() as s:
        s.sendall(b"NRDT" + bytes(random.getrandbits(8) for _ in range(24)))
        s.sendall(b"x" * 1000)


def hello_then_leave():
    with conn() as s:
        s.sendall(frame(b'{"type":"hello","proto":1,"test":"stream","params":{"flows":4}}'))
        try:
            s.recv(4096)  # the accept, then we vanish without opening data connections
        except OSError:
            pass


KINDS = [garbage, huge_length, truncated, slowloris, reset, flood, bad_params, stray_data,
         hello_then_leave]


def worker(deadline):
    while time.monotonic() < deadline:
        kind = random.choice(KINDS)
        try:
            kind()
        except OSError:
            pass
        with lock:
            counts[kind.__name__] = counts.get(kind.__name__, 0) + 1


def main():
    random.seed(12345)
    deadline = time.monotonic() + SECONDS
    threads = [threading.Thread(target=worker, args=(deadline,)) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SECONDS + 15)
    total = sum(counts.values())
    print("hostile connections: %d %s" % (total, " ".join("%s=%d" % kv for kv in sorted(counts.items()))))


main()
