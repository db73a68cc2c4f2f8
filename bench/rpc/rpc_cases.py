"""The RPCs the benchmark measures, where their request bodies
(bench/rpc/requests/*.txtpb) and the protocol's definition are, and the
bodies encoded as the load generators send them.
"""
import os
import struct
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUESTS = os.path.join(ROOT, "bench", "rpc", "requests")
PROTO_DIR = os.path.join(ROOT, "proto")
PROTO = os.path.join(PROTO_DIR, "recovery", "v1", "recovery.proto")
SERVICE = "recovery.v1.RecoveryService"


class Case:
    """One measured RPC: its method, its body and, for the failure case, the
    companion stream that keeps the breaker closed (see decide_error.txtpb)."""

    def __init__(self, name, method, request_type, body, companion=None):
        self.name, self.method, self.request_type = name, method, request_type
        self.body, self.companion = body, companion


CASES = [
    Case("Classify", "Classify", "ClassifyRequest", "classify"),
    Case("Decide admission", "Decide", "DecideRequest", "decide_admission"),
    Case("Decide error", "Decide", "DecideRequest", "decide_error", companion="reset_transient"),
    Case("RecordOutcome", "RecordOutcome", "RecordOutcomeRequest", "record_outcome"),
    Case("GetBreakerState", "GetBreakerState", "GetBreakerStateRequest", "get_breaker_state"),
]
READ_CASES = [c for c in CASES if c.method == "GetBreakerState"]
COMPANION_METHOD, COMPANION_TYPE = "RecordOutcome", "RecordOutcomeRequest"


def encode_bodies(work):
    """protoc --encode each text message; writes NAME.bin (the message) and
    NAME.grpc (gRPC-framed: flag 0, big-endian length, message)."""
    bodies = {}
    wanted = [(c.body, c.request_type) for c in CASES]
    wanted += [(c.companion, COMPANION_TYPE) for c in CASES if c.companion]
    for name, rtype in wanted:
        with open(os.path.join(REQUESTS, name + ".txtpb"), "rb") as f:
            text = f.read()
        msg = subprocess.run(["protoc", "--encode=recovery.v1." + rtype, "-I", PROTO_DIR, PROTO],
                             input=text, stdout=subprocess.PIPE, check=True).stdout
        raw, framed = os.path.join(work, name + ".bin"), os.path.join(work, name + ".grpc")
        with open(raw, "wb") as f:
            f.write(msg)
        with open(framed, "wb") as f:
            f.write(b"\x00" + struct.pack(">I", len(msg)) + msg)
        bodies[name] = (raw, framed)
    return bodies
