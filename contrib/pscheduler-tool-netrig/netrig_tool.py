"""Shared code of the pScheduler tool plugin for netrig (throughput and rtt tests).

pScheduler runs each executable of a tool with one JSON document on standard input and reads
one JSON document from standard output (scripts/PDK in perfsonar/pscheduler). This module holds
what the executables share: JSON in and out, ISO 8601 durations and times, the configuration
file, the spec keys each test accepts and the netrig options they become.

Only the Python standard library is used, so the plugin installs on any host with python3.
"""

import configparser
import datetime
import json
import math
import os
import re
import sys

VERSION = "1.0"
TESTS = ("throughput", "rtt")
# the newest spec schema of each test whose keys this plugin knows
MAX_SPEC_SCHEMA = {"throughput": 7, "rtt": 4}

CONFIG_FILE = os.environ.get("NETRIG_PSCHEDULER_CONF", "/etc/pscheduler/tool/netrig.conf")
DEFAULT_NETRIG = "/usr/bin/netrig"
DEFAULT_PORT = 5301  # netrig serve's default port: the resident daemon (single-ended, rtt)
DEFAULT_SERVER_PORT = 5302  # participant 1's one-off server (throughput), beside the daemon
DEFAULT_DURATION_S = 10  # as netrig stream -t and pScheduler's other throughput tools
DEFAULT_LINK_RTT_S = 0.2  # longest terrestrial path
SERVER_WAIT_S = 3  # how long the client waits for participant 1's server to listen
SHUTDOWN_S = 2  # the server's results and exit after the client's stop
START_SLACK_S = 2  # a run launched this late after its scheduled start is refused
RTT_DEFAULT_COUNT = 5
RTT_DEFAULT_INTERVAL_S = 1.0


def fail(message):
    """pScheduler's failure shape for a malformed request: the message on stderr, exit 1."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.exit(1)


def load_input():
    text = sys.stdin.read()
    try:
        doc = json.loads(text)
    except ValueError as ex:
        fail("netrig tool: standard input is not JSON (%s)" % ex)
    if not isinstance(doc, dict):
        fail("netrig tool: standard input must be a JSON object, got %s" % type(doc).__name__)
    return doc


def emit(doc):
    sys.stdout.write(json.dumps(doc, sort_keys=True) + "\n")
    sys.exit(0)


# ------------------------------------------------------------------ ISO 8601

_DURATION = re.compile(r"^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?"
                       r"(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def iso_seconds(text, key):
    """Seconds in an ISO 8601 duration such as PT10S or PT0.5S; ValueError naming KEY."""
    match = _DURATION.match(text) if isinstance(text, str) else None
    if match is None or text in ("P", "PT"):
        raise ValueError("%s: '%s' is not an ISO 8601 duration (e.g. PT10S)" % (key, text))
    weeks, days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return (((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds


def seconds_iso(seconds):
    """An ISO 8601 duration for SECONDS: whole seconds as PT12S, else up to microseconds."""
    if seconds == int(seconds):
        return "PT%dS" % int(seconds)
    return "PT%sS" % ("%.6f" % seconds).rstrip("0")


def parse_time(text):
    """An aware datetime from pScheduler's ISO 8601 time; a naive one counts as local time."""
    if not isinstance(text, str):
        raise ValueError("schedule.start must be an ISO 8601 time string, got %r" % (text,))
    try:
        when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("schedule.start: '%s' is not an ISO 8601 time" % text) from None
    if when.tzinfo is None:
        when = when.astimezone()
    return when


def now():
    return datetime.datetime.now(datetime.timezone.utc)


# ------------------------------------------------------------------ configuration

def config():
    """netrig_cmd and server_port from the [netrig] section of CONFIG_FILE, else defaults."""
    conf = {"netrig_cmd": DEFAULT_NETRIG, "server_port": DEFAULT_SERVER_PORT}
    parser = configparser.ConfigParser()
    try:
        parser.read(CONFIG_FILE)
    except configparser.Error as ex:
        fail("netrig tool: %s is malformed (%s); fix or remove it" % (CONFIG_FILE, ex))
    if parser.has_option("netrig", "netrig_cmd"):
        conf["netrig_cmd"] = parser.get("netrig", "netrig_cmd")
    if parser.has_option("netrig", "server_port"):
        try:
            conf["server_port"] = int(parser.get("netrig", "server_port"))
        except ValueError:
            fail("netrig tool: server_port in %s must be a port number" % CONFIG_FILE)
    return conf


# ------------------------------------------------------------------ spec keys

# throughput: every key the plugin accepts, and what it becomes (documentation and can-run)
THROUGHPUT_KEYS = {
    "schema": "the spec's version (1 to 7)",
    "source": "-B ADDR on the client (unless local-address is given)",
    "source-node": "pScheduler's address of participant 0 (not a netrig option)",
    "dest": "-c HOST on the client",
    "dest-node": "pScheduler's address of participant 1 (not a netrig option)",
    "duration": "-t",
    "interval": "-i",
    "link-rtt": "setup time in the duration and --timeout of the client",
    "parallel": "-P",
    "udp": "-u",
    "bandwidth": "-b RATE (per flow; TCP: paced in the application)",
    "burst-size": "-b RATE/N (with bandwidth)",
    "fq-rate": "--fq-rate",
    "window-size": "-w",
    "mss": "-M",
    "buffer-length": "-l",
    "ip-tos": "-S",
    "ip-version": "-4 or -6 on both ends",
    "local-address": "-B ADDR on the client",
    "omit": "-O",
    "no-delay": "-N",
    "congestion": "-C",
    "zero-copy": "-Z",
    "client-cpu-affinity": "-A CPU",
    "server-cpu-affinity": "--server-cpus CPU",
    "single-ended": "client only, toward a resident 'netrig serve' at dest",
    "single-ended-port": "-p (single-ended)",
    "reverse": "-R",
    "loopback": "netrig stream without -c (a built-in loopback server)",
}
THROUGHPUT_REFUSED = {
    "flow-label": "netrig does not set the IPv6 flow label",
    "bandwidth-strict": "netrig paces every flow to -b; it has no non-strict mode",
    "reverse-connections": "netrig's client always opens the connections",
}

RTT_KEYS = {
    "schema": "the spec's version (1 to 4)",
    "dest": "-c HOST (a resident 'netrig serve' must answer there)",
    "source": "-B ADDR",
    "source-node": "pScheduler's address of participant 0 (not a netrig option)",
    "count": "transactions: -t COUNT x INTERVAL at --rate 1/INTERVAL",
    "interval": "--rate 1/INTERVAL (default 1 s; 1/INTERVAL a whole number)",
    "ip-version": "-4 or -6",
    "ip-tos": "-S",
    "length": "-r LENGTH (request and response bytes)",
    "timeout": "--txn-timeout",
    "deadline": "caps -t",
    "port": "-p",
    "protocol": "'tcp' (default) or 'udp' (-u)",
}
RTT_REFUSED = {
    "flow-label": "netrig does not set the IPv6 flow label",
    "fragment": "netrig rr does not send fragmented requests",
    "hostnames": "netrig rr reports addresses only",
    "suppress-loopback": "netrig rr has no loopback suppression",
    "ttl": "netrig does not set the TTL",
}


def _check_types(spec, test):
    """ValueErrors for values of the wrong kind (pScheduler's test plugin checks the rest)."""
    durations = {"throughput": ("duration", "interval", "link-rtt", "omit"),
                 "rtt": ("interval", "timeout", "deadline")}[test]
    for key in durations:
        if key in spec:
            iso_seconds(spec[key], key)
    for key, value in spec.items():
        if key in ("parallel", "bandwidth", "burst-size", "fq-rate", "window-size", "mss",
                   "buffer-length", "count", "length", "single-ended-port", "port"):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError("%s: %r is not a whole number of at least 1" % (key, value))
        if key in ("udp", "no-delay", "zero-copy", "single-ended", "reverse", "loopback"):
            if not isinstance(value, bool):
                raise ValueError("%s: %r is not true or false" % (key, value))
    if "ip-tos" in spec and spec["ip-tos"] not in range(256):
        raise ValueError("ip-tos: %r is not 0 to 255" % (spec["ip-tos"],))
    if "ip-version" in spec and spec["ip-version"] not in (4, 6):
        raise ValueError("ip-version: %r is not 4 or 6" % (spec["ip-version"],))
    if "dest" not in spec and not spec.get("loopback"):
        raise ValueError("dest: missing (the host to test toward)")


def spec_reasons(test, spec):
    """Why this plugin cannot run SPEC of TEST: a list of one-line reasons, empty if it can."""
    if test not in TESTS:
        return ["netrig runs the throughput and rtt tests, not '%s'" % test]
    if not isinstance(spec, dict):
        return ["the test specification is missing or not an object"]
    reasons = []
    schema = spec.get("schema", 1)
    if not isinstance(schema, int) or schema < 1 or schema > MAX_SPEC_SCHEMA[test]:
        reasons.append("schema %r of the %s spec is newer than this plugin knows (%d)"
                       % (schema, test, MAX_SPEC_SCHEMA[test]))
    keys = THROUGHPUT_KEYS if test == "throughput" else RTT_KEYS
    refused = THROUGHPUT_REFUSED if test == "throughput" else RTT_REFUSED
    for key in sorted(spec):
        if key in refused:
            reasons.append("netrig does not support the %s option: %s" % (key, refused[key]))
        elif key not in keys:
            reasons.append("netrig does not support the %s option: not a %s spec key it knows"
                           % (key, test))
    try:
        _check_types(spec, test)
    except ValueError as ex:
        reasons.append(str(ex))
    if test == "throughput":
        if "burst-size" in spec and "bandwidth" not in spec:
            reasons.append("burst-size needs bandwidth (netrig -b RATE/N)")
        if spec.get("udp") and spec.get("zero-copy"):
            reasons.append("zero-copy applies to TCP only (netrig -Z)")
        if spec.get("udp") and any(k in spec for k in ("mss", "congestion", "no-delay", "fq-rate")):
            reasons.append("mss, congestion, no-delay and fq-rate apply to TCP only")
        if spec.get("single-ended") and spec.get("loopback"):
            reasons.append("single-ended and loopback cannot be combined")
    if test == "rtt" and "interval" in spec and not reasons:
        if rtt_rate(spec) is None:
            reasons.append("interval %s: netrig rr paces whole transactions per second "
                           "(--rate 1/INTERVAL), so 1/INTERVAL must be a whole number from 1 "
                           "(PT1S, PT0.5S, PT0.1S ...)" % spec["interval"])
    if test == "rtt" and spec.get("protocol", "tcp") not in ("tcp", "udp"):
        reasons.append("protocol %r: netrig rr speaks 'tcp' or 'udp'" % (spec["protocol"],))
    return reasons


# ------------------------------------------------------------------ durations

def setup_s(spec):
    """Seconds to connect and set a test up: 1 s, plus 1 s per 50 ms of link RTT."""
    rtt = iso_seconds(spec["link-rtt"], "link-rtt") if "link-rtt" in spec else DEFAULT_LINK_RTT_S
    return max(1, int(math.ceil(rtt * 20)))


def test_seconds(spec):
    """(duration, omit) of a throughput spec in seconds."""
    duration = iso_seconds(spec["duration"], "duration") if "duration" in spec else DEFAULT_DURATION_S
    omit = iso_seconds(spec["omit"], "omit") if "omit" in spec else 0
    return duration, omit


def rtt_plan(spec):
    """(count, interval_s, run_s) of an rtt spec: COUNT transactions every INTERVAL."""
    count = spec.get("count", RTT_DEFAULT_COUNT)
    interval = iso_seconds(spec["interval"], "interval") if "interval" in spec else RTT_DEFAULT_INTERVAL_S
    run = count * interval
    if "deadline" in spec:
        run = min(run, iso_seconds(spec["deadline"], "deadline"))
    return count, interval, max(run, 0.1)


def rtt_rate(spec):
    """netrig rr's --rate for an rtt spec: 1/interval when a whole number >= 1, else None."""
    _, interval, _ = rtt_plan(spec)
    if interval <= 0:
        return None
    rate = 1.0 / interval
    if rate < 1 or abs(rate - round(rate)) > 1e-6 * rate:
        return None
    return int(round(rate))


def full_duration_s(test, spec):
    """The time pScheduler must reserve for a run, whole seconds."""
    if test == "rtt":
        _, _, run = rtt_plan(spec)
        timeout = iso_seconds(spec["timeout"], "timeout") if "timeout" in spec else 2
        return int(math.ceil(run + timeout + 2))
    duration, omit = test_seconds(spec)
    return int(math.ceil(setup_s(spec) + omit + duration + SERVER_WAIT_S + SHUTDOWN_S))
