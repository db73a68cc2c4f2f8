"""Single calls through curl, their answers decoded with protoc: one sample
answer per case (a body the service rejects answers HTTP 200 with
grpc-status != 0, which h2load counts as a success), the bytes of one
answer, and a tool's breaker state as one line.
"""
import os
import re
import struct
import subprocess

from rpc_cases import PROTO, PROTO_DIR, SERVICE


def sample_answer(port, case, bodies, body=None):
    """One call through curl; returns (grpc-status, first line of the decoded
    response), e.g. (0, 'action: ACTION_RETRY')."""
    name = body or case.body
    out = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
         "-H", "te: trailers", "--data-binary", "@" + bodies[name][1], "-D", "-",
         "-o", "/dev/stdout", "http://127.0.0.1:%d/%s/%s" % (port, SERVICE, case.method)],
        stdout=subprocess.PIPE, check=False).stdout
    m = re.search(rb"grpc-status: *(\d+)", out)
    status = int(m.group(1)) if m else None
    frame = out.find(b"\r\n\r\n")
    payload = out[frame + 4:] if frame >= 0 else b""
    first = ""
    if len(payload) >= 5 and payload[0] == 0:
        n = struct.unpack(">I", payload[1:5])[0]
        resp_type = case.request_type.replace("Request", "Response")
        dec = subprocess.run(["protoc", "--decode=recovery.v1." + resp_type, "-I", PROTO_DIR,
                              PROTO], input=payload[5:5 + n], stdout=subprocess.PIPE).stdout
        first = dec.decode(errors="replace").strip().splitlines()[0] if dec.strip() else "(empty)"
    return status, first


def answer_bytes(port, case, bodies):
    """The message of one answer of the server to the case's request."""
    out = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
         "-H", "te: trailers", "--data-binary", "@" + bodies[case.body][1], "-o", "-",
         "http://127.0.0.1:%d/%s/%s" % (port, SERVICE, case.method)],
        stdout=subprocess.PIPE, check=True).stdout
    if len(out) < 5 or out[0] != 0:
        raise RuntimeError("no answer to sample for %s" % case.name)
    return out[5:5 + struct.unpack(">I", out[1:5])[0]]


def breaker_line(port, tool_id, load):
    """GetBreakerState of one tool through curl, decoded, as one line."""
    load.bodies["_probe"] = encode_probe(load.work, tool_id)
    return probe_lines(port, load.bodies)


def encode_probe(work, tool_id):
    msg = subprocess.run(["protoc", "--encode=recovery.v1.GetBreakerStateRequest", "-I",
                          PROTO_DIR, PROTO], input=('tool_ids: "%s"' % tool_id).encode(),
                         stdout=subprocess.PIPE, check=True).stdout
    raw, framed = os.path.join(work, "probe.bin"), os.path.join(work, "probe.grpc")
    with open(raw, "wb") as f:
        f.write(msg)
    with open(framed, "wb") as f:
        f.write(b"\x00" + struct.pack(">I", len(msg)) + msg)
    return raw, framed


def probe_lines(port, bodies):
    """The decoded GetBreakerState answer for the probe tool, as one line."""
    out = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
         "-H", "te: trailers", "--data-binary", "@" + bodies["_probe"][1], "-o", "-",
         "http://127.0.0.1:%d/%s/GetBreakerState" % (port, SERVICE)],
        stdout=subprocess.PIPE).stdout
    if len(out) < 5:
        return "(no answer)"
    n = struct.unpack(">I", out[1:5])[0]
    dec = subprocess.run(["protoc", "--decode=recovery.v1.GetBreakerStateResponse", "-I",
                          PROTO_DIR, PROTO], input=out[5:5 + n], stdout=subprocess.PIPE).stdout
    return " ".join(l.strip() for l in dec.decode().splitlines() if ":" in l)
