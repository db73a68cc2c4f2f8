#!/usr/bin/env python3
"""Instructions redis-server runs per request of the Redis store, counted
by callgrind, which the machine's load does not change (redis_cost.py's CPU
figures it does): everything redis-server runs in user space per request
(reading, parsing, running, answering; the kernel's part of a round trip is
not counted).

Starts redis-server under valgrind --tool=callgrind, loads the store's
functions library joined from --lua (as scripts/lua_library.cmake joins
it), then sends
--requests requests of each kind one after another on one connection, after
50 of warm-up, and reads the instruction count callgrind collected for them:

  admission      the admit script (FCALL), and what an admission that
                 changes nothing sends instead: GET of the record (and TIME
                 before it once a second on a connection, which --parts
                 prices)
  record         a success and a transient failure on a CLOSED breaker (the
                 record script), and what a success that changes nothing
                 but its window's count and a failure below the threshold
                 (each counted in the calls key) send instead (TIME as
                 above)
  ratelimit      envoyproxy/ratelimit's ShouldRateLimit (INCRBY + EXPIRE,
                 pipelined), for comparison
  parts          (--parts) what each command of those round trips adds:
                 PING, then PING pipelined with one command, the command's
                 share being the difference

  bench/rpc/redis_instructions.py [--lua server/store/lua] [--parts]

Run from another checkout, it measures that checkout's scripts with the
requests they take there.
"""
import argparse
import glob
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def uses(path):
    with open(path) as f:
        return f.readline().split(":", 1)[1].split()


def read(path):
    with open(path) as f:
        return f.read()


def library(lua, name):
    scripts = sorted(glob.glob(os.path.join(lua, "*.lua")))
    pieces = []
    for s in scripts:
        pieces += [p for p in uses(s) if p not in pieces]
    text = "#!lua name=%s\nlocal RD_LIB = '%s'\n" % (name, name)
    text += "".join(read(os.path.join(lua, "lib", p + ".lua")) for p in pieces)
    for s in scripts:
        text += "redis.register_function(RD_LIB .. '_%s', function(KEYS, ARGV)\n%send)\n" % (
            os.path.basename(s)[:-4], read(s))
    return text


def encode(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def reply(f):
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind in (b"+", b":"):
        return rest
    if kind == b"-":
        sys.exit("redis: " + rest.decode())
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2]
    if kind == b"*":
        return [reply(f) for _ in range(max(int(rest), 0))]
    sys.exit("redis: unexpected reply %r" % line)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lua", default=os.path.join(ROOT, "server", "store", "lua"))
    p.add_argument("--requests", type=int, default=400)
    p.add_argument("--parts", action="store_true",
                   help="also what each command adds to a round trip")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="redis-instructions-")
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    port_n = port.getsockname()[1]
    port.close()
    vg = subprocess.Popen(["valgrind", "--tool=callgrind",
                           "--callgrind-out-file=%s/callgrind.out.%%p" % work,
                           "redis-server", "--port", str(port_n), "--bind", "127.0.0.1",
                           "--save", "", "--appendonly", "no", "--dir", work],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    conn = None
    for _ in range(150):
        try:
            conn = socket.create_connection(("127.0.0.1", port_n))
            break
        except OSError:
            time.sleep(0.2)
    if conn is None:
        sys.exit("redis-server under valgrind did not start")
    f = conn.makefile("rb")

    def send(*commands):
        conn.sendall(b"".join(encode(c) for c in commands))
        return [reply(f) for _ in commands]

    def counted():
        subprocess.run(["callgrind_control", "-d", str(vg.pid)], capture_output=True, check=True)
        time.sleep(0.3)
        newest = max(glob.glob(work + "/callgrind.out.*"), key=os.path.getmtime)
        return int(re.search(r"^(?:summary|totals): (\d+)", read(newest), re.M).group(1))

    send(("FUNCTION", "LOAD", "REPLACE", library(args.lua, "rd_bench")))
    key = "bench:{tool:%s}:%s"
    FAILURE = 100000001  # RD_CALLS_FAILURE: one call and one failure

    def admit_args(tool):
        return [key % (tool, "breaker"), key % (tool, "probe"), key % (tool, "calls"), "-1",
                tool, "3", "1", "30000", "5000", "12345", "3600000", "1", "bench:breaker-events"]

    def record_args(tool, outcome):
        # record.lua's numbers, as redis_breakers.c packs them; a threshold
        # no run reaches: every failure lengthens the streak
        numbers = struct.pack("<20d", -1, 1000000000, 1, 30000, int(outcome), 3600000, 1, 0, 50,
                              10, 60000, 0, 100, 1, 60000, 120, -1, -1, -1, -1)
        return [key % (tool, x) for x in ("breaker", "probe", "quorum", "calls")] + [
            numbers, "0", tool, "bench:breaker-events"]

    cases = [
        ("admission, FCALL admit", lambda t: [("FCALL", "rd_bench_admit", 3, *admit_args(t))]),
        ("admission, GET", lambda t: [("GET", key % (t, "breaker"))]),
    ]
    for outcome, what in (("1", "a success"), ("2", "a transient failure")):
        cases.append(("record, %s, FCALL" % what,
                      lambda t, o=outcome: [("FCALL", "rd_bench_record", 4,
                                             *record_args(t, o))]))
    # what a success on an unchanging CLOSED breaker sends instead: the
    # record read and the call counted in the tool's calls key
    cases.append(("record, a success, GET + INCR pipelined",
                  lambda t: [("GET", key % (t, "breaker")), ("INCR", key % (t, "calls"))]))
    # what a transient failure below the threshold sends instead: the same,
    # the failure counted in the calls key by INCRBY (redis_in_place.c)
    cases.append(("record, a failure, GET + INCRBY pipelined",
                  lambda t: [("GET", key % (t, "breaker")),
                             ("INCRBY", key % (t, "calls"), FAILURE)]))
    cases.append(("ratelimit ShouldRateLimit: INCRBY + EXPIRE pipelined",
                  lambda t: [("INCRBY", "ratelimit_" + t, 1), ("EXPIRE", "ratelimit_" + t, 60)]))
    if args.parts:
        # a round trip of PING alone, then PING with each command: the
        # difference is what the command adds (its parsing, running and
        # answer; the round trip's own cost is PING's)
        parts = [
            ("TIME", lambda t: ("TIME",)),
            ("GET of the record", lambda t: ("GET", key % (t, "breaker"))),
            ("GETEX of the record, PERSIST", lambda t: ("GETEX", key % (t, "breaker"), "PERSIST")),
            ("INCR of the calls key", lambda t: ("INCR", key % (t, "calls"))),
            ("INCRBY of the calls key (a failure)",
             lambda t: ("INCRBY", key % (t, "calls"), FAILURE)),
            ("BITFIELD, one INCRBY i64 of the record", lambda t: ("BITFIELD", key % (t, "breaker"),
                                                                  "INCRBY", "i64", "#12", "1")),
        ]
        cases.append(("PING (a round trip)", lambda t: [("PING",)]))
        for name, command in parts:
            cases.append(("PING + " + name, lambda t, c=command: [("PING",), c(t)]))
    try:
        for i, (name, requests) in enumerate(cases):
            tool = "t%d" % i
            send(("FCALL", "rd_bench_admit", 3, *admit_args(tool)))  # the breaker exists
            batch = requests(tool)
            for _ in range(50):
                send(*batch)
            subprocess.run(["callgrind_control", "-z", str(vg.pid)], capture_output=True,
                           check=True)
            for _ in range(args.requests):
                send(*batch)
            print("%-55s %8.0f instructions per request" % (name, counted() / args.requests),
                  flush=True)
    finally:
        conn.close()
        subprocess.run(["redis-cli", "-p", str(port_n), "shutdown", "nosave"],
                       capture_output=True)
        vg.wait()


if __name__ == "__main__":
    main()
