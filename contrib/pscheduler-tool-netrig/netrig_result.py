"""netrig's -J documents turned into pScheduler's throughput and rtt result formats.

throughput (pscheduler-test-throughput, validate.py RESULT_SCHEMA): "intervals" hold the
client's interval samples ("streams" per flow, "summary" their total); "summary.streams" one
entry per flow and "summary.summary" the test's total. As pScheduler's iperf3 tool does,
"throughput-bits"/"throughput-bytes" are the senders' figures and "receiver-throughput-bits" the
receivers'; "rtt" is in microseconds and "jitter" in milliseconds; "sent"/"lost" count UDP
datagrams. The result format forbids extra top-level keys, so netrig's own figures (CPU cost,
fairness, congestion control, warnings) go in "summary.netrig", an object the format allows.

rtt (pscheduler-test-rtt): "roundtrips" come from netrig rr's latency histogram (one entry per
completed transaction, its "rtt" the middle of its histogram bin, within 0.4 %; a lost one has
no "rtt"); "min"/"max"/"mean" are netrig's exact figures, "stddev" the histogram's.
"""

import math

import netrig_tool


def _nn(value):
    """netrig's -1 ("unknown") as JSON null."""
    return None if value is None or value < 0 else value


def _interval(iv, tcp):
    summary = {
        "start": iv["start_s"],
        "end": iv["end_s"],
        "throughput-bytes": iv["bytes"],
        "throughput-bits": iv["throughput_bps"],
        "omitted": iv["omitted"],
    }
    if tcp:
        summary["retransmits"] = _nn(iv["retransmits"])
    streams = []
    for cell in iv.get("flows", []):
        stream = {
            "stream-id": cell["id"],
            "start": iv["start_s"],
            "end": iv["end_s"],
            "throughput-bytes": cell["bytes"],
            "throughput-bits": cell["throughput_bps"],
            "omitted": iv["omitted"],
        }
        if tcp:
            stream["retransmits"] = _nn(cell["retransmits"])
            stream["rtt"] = cell["rtt_us"] if cell["rtt_us"] > 0 else None
        streams.append(stream)
    return {"streams": streams, "summary": summary}


def _flow(flow, seconds, tcp):
    entry = {
        "stream-id": flow["id"],
        "start": 0,
        "end": seconds,
        "throughput-bytes": flow["sender_bytes"],
        "throughput-bits": flow["sender_throughput_bps"],
        "receiver-throughput-bits": flow["throughput_bps"],
    }
    if tcp:
        entry["retransmits"] = _nn(flow["retransmits"])
        rtt = flow.get("rtt_mean_us") or flow.get("rtt_us") or 0
        entry["rtt"] = rtt if rtt > 0 else None
    else:
        entry["sent"] = flow["datagrams_sent"]
        entry["lost"] = flow["datagrams_lost"]
        entry["jitter"] = flow["jitter_us"] / 1000.0
    return entry


def throughput(doc, diags):
    """A pScheduler throughput result from netrig stream's -J DOC."""
    tcp = not doc["params"]["udp"]
    total = doc["summary"]
    seconds = total["seconds"]
    summary = {
        "start": 0,
        "end": seconds,
        "throughput-bytes": total["sender_bytes"],
        "throughput-bits": total["sender_throughput_bps"],
        "receiver-throughput-bits": total["throughput_bps"],
    }
    if tcp:
        summary["retransmits"] = total["retransmits"]
        rtts = [f.get("rtt_mean_us") or f.get("rtt_us") or 0 for f in doc["flows"]]
        rtts = [r for r in rtts if r > 0]
        summary["rtt"] = sum(rtts) / len(rtts) if rtts else None
    else:
        udp = total["udp"]
        summary["sent"] = udp["datagrams_sent"]
        summary["lost"] = udp["datagrams_lost"]
        summary["jitter"] = udp["jitter_us"] / 1000.0
    cpu = total.get("cpu", {})
    extras = {
        "what": "netrig's own figures; see netrig docs/json.md",
        "netrig-version": doc["netrig_version"],
        "started-at": doc["started_at"],
        "server-version": doc["server_version"],
        "direction": doc["params"]["direction"],
        "client-to-server-bps": total["client_to_server_bps"],
        "server-to-client-bps": total["server_to_client_bps"],
        "jain-index": total["jain_index"],
        "congestion": total.get("congestion", ""),
        "client-cpu-busy-pct": cpu.get("local", {}).get("busy_pct"),
        "server-cpu-busy-pct": cpu.get("remote", {}).get("busy_pct"),
        "client-cores-per-10gbps": total.get("cores_per_10gbps", {}).get("local"),
        "server-cores-per-10gbps": total.get("cores_per_10gbps", {}).get("remote"),
        "ended-by": doc["ended_by"],
        "warnings": doc["warnings"],
    }
    if not tcp:
        extras["loss-pct"] = total["udp"]["loss_pct"]
        extras["datagrams-received"] = total["udp"]["datagrams_received"]
    result = {
        "succeeded": not doc["partial"],
        "intervals": [_interval(iv, tcp) for iv in doc["intervals"]],
        "summary": {
            "streams": [_flow(f, seconds, tcp) for f in doc["flows"]],
            "summary": summary,
            "netrig": extras,
        },
        "diags": diags,
    }
    if doc["params"]["mss"] > 0:
        result["mss"] = doc["params"]["mss"]
    if doc["params"]["window"] > 0:
        result["requested-tcp-window-size"] = doc["params"]["window"]
    if doc["partial"]:
        result["error"] = "netrig: the test did not complete: %s" % doc.get("error", doc["ended_by"])
    return result


def read_histogram(path):
    """[(lo_us, hi_us, count)] from netrig rr --histogram FILE."""
    bins = []
    with open(path) as handle:
        for line in handle:
            if line.startswith("#") or not line.strip():
                continue
            lo, hi, count = line.split()[:3]
            bins.append((float(lo), float(hi), int(count)))
    return bins


def rtt(doc, bins, address, diags):
    """A pScheduler rtt result from netrig rr's -J DOC and latency histogram BINS."""
    total = doc["summary"]
    received = total["transactions"]
    lost = total["timeouts"]
    sent = received + lost
    roundtrips = []
    values = []
    for lo, hi, count in bins:
        mid = (lo + hi) / 2.0
        for _ in range(count):
            values.append(mid)
            roundtrips.append({"ip": address, "length": doc["params"]["req_size"],
                               "rtt": netrig_tool.seconds_iso(round(mid) / 1e6)})
    roundtrips += [{"ip": address} for _ in range(lost)]  # no reply: no rtt
    result = {
        "schema": 1,
        "succeeded": not doc["partial"] and received > 0,
        "roundtrips": roundtrips,
        "sent": sent,
        "received": received,
        "lost": lost,
        "loss": (lost / sent) if sent else 1.0,
        "diags": diags,
    }
    if received:
        lat = total["latency_us"]
        result["min"] = netrig_tool.seconds_iso(round(lat["min"]) / 1e6)
        result["max"] = netrig_tool.seconds_iso(round(lat["max"]) / 1e6)
        result["mean"] = netrig_tool.seconds_iso(round(lat["mean"]) / 1e6)
        mean = sum(values) / len(values) if values else 0
        var = sum((v - mean) ** 2 for v in values) / len(values) if values else 0
        result["stddev"] = netrig_tool.seconds_iso(round(math.sqrt(var)) / 1e6)
    if not result["succeeded"]:
        result["error"] = doc.get("error") or "no transaction completed (%d lost)" % lost
    return result
