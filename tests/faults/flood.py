"""A flood of oversize and malformed requests, run as its own process so
its Python work does not slow the well-formed callers being measured.

    python flood.py ADDRESS SECONDS [--connections N]

Each connection (a thread with its own TCP connection) sends, in turn:
oversize requests (above the server's 1 MiB max_receive_bytes), bytes that
are not a protobuf message, truncated messages, a tool_id over the 256-byte
limit, a tool_id that is not UTF-8 and an out-of-range enum. At the end it
prints one JSON object: calls sent, status codes seen, latency p99 (ms).
Only the standard library and grpcio are used: the requests are written as
raw bytes, which is the point."""
import argparse
import json
import math
import random
import threading
import time

import grpc

METHOD = "/recovery.v1.RecoveryService/Decide"
OVERSIZE_BYTES = 1536 * 1024


def varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number: int, data: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(data)) + data


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def payloads(rng: random.Random):
    """(name, bytes) in a fixed rotation; the oversize one is built once."""
    oversize = field_bytes(1, b"x" * OVERSIZE_BYTES)
    error_bad_kind = field_bytes(2, field_varint(6, 999))  # ToolError.kind out of range
    return [
        ("oversize", oversize),
        ("garbage", bytes(rng.getrandbits(8) for _ in range(128))),
        ("truncated", b"\x0a\x40" + b"flight_search"),
        ("long_tool_id", field_bytes(1, b"t" * 300)),
        ("not_utf8", field_bytes(1, b"\xff\xfe\xfd")),
        ("bad_enum", field_bytes(1, b"flight_search") + error_bad_kind),
        ("negative_attempt", field_bytes(1, b"flight_search") + field_varint(3, -5)),
    ]


def percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(1, math.ceil(q / 100.0 * len(ordered))) - 1]


def run(address: str, seconds: float, connections: int) -> dict:
    stop = time.monotonic() + seconds
    lock = threading.Lock()
    codes: dict[str, int] = {}
    by_kind: dict[str, dict[str, int]] = {}
    latencies: list[float] = []

    def worker(i: int):
        rng = random.Random(i)
        kinds = payloads(rng)
        channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1),
                                                          ("grpc.enable_retries", 0)])
        call = channel.unary_unary(METHOD)  # bytes in, bytes out
        n = i
        while time.monotonic() < stop:
            name, body = kinds[n % len(kinds)]
            n += 1
            started = time.monotonic()
            try:
                call(body, timeout=5)
                code = "OK"
            except grpc.RpcError as e:
                code = e.code().name
            with lock:
                latencies.append((time.monotonic() - started) * 1000)
                codes[code] = codes.get(code, 0) + 1
                by_kind.setdefault(name, {})
                by_kind[name][code] = by_kind[name].get(code, 0) + 1
        channel.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"calls": len(latencies), "codes": codes, "by_kind": by_kind,
            "p99_ms": round(percentile(latencies, 99), 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("address")
    ap.add_argument("seconds", type=float)
    ap.add_argument("--connections", type=int, default=8)
    args = ap.parse_args()
    print(json.dumps(run(args.address, args.seconds, args.connections)))


if __name__ == "__main__":
    main()
