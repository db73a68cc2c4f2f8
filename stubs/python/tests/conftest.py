"""A live recoveryd for the integration tests: started on a free
127.0.0.1 port with the shipped classification rules and the tool manifests
the scenarios need, stopped at the end of the session.

The binary: $RECOVERYD (ctest's stubs.all and tests/stubs/run_all.sh set it).
Without it the tests that need a server fail; they never skip."""
import os
import pathlib
import shutil
import socket
import subprocess
import time

import grpc
import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

# The scenarios' tools:
#   flaky_search    default retry policy (fails twice, then succeeds)
#   lookup_hotel    a permanent error escalates
#   rank_hotels     optional dependent of lookup_hotel: skipped when it fails
#   train_search    breaker opens after 2 failures; alternative train_search_backup
#   flight_search   as shipped (examples/langgraph_agent.py)
#   hotel_search    as shipped (examples/openai_agents_agent.py)
MANIFESTS = {
    "flaky_search": "tool:\n  id: flaky_search\n",
    "lookup_hotel": "tool:\n  id: lookup_hotel\n",
    "rank_hotels": "tool:\n  id: rank_hotels\n  depends_on: [lookup_hotel]\n  optional: true\n",
    "train_search": ("tool:\n  id: train_search\n  alternatives: [train_search_backup]\n"
                     "  circuit_breaker: {failure_threshold: 2}\n"),
    "train_search_backup": "tool:\n  id: train_search_backup\n",
    "hotel_search": "tool:\n  id: hotel_search\n",
    "flight_search": "tool:\n  id: flight_search\n  alternatives: [flight_search_backup]\n",
    "flight_search_backup": "tool:\n  id: flight_search_backup\n",
    # send_email's effect may have happened after a reset: verify with
    # find_sent_email; charge_card honours an idempotency key.
    # (its breaker threshold is high: several tests end on an unverified failure)
    "send_email": ("tool:\n  id: send_email\n  effects: non_idempotent\n"
                   "  verify_tool: find_sent_email\n  circuit_breaker: {failure_threshold: 100}\n"),
    "find_sent_email": "tool:\n  id: find_sent_email\n  effects: none\n  timeout_ms: 700\n",
    "charge_card": "tool:\n  id: charge_card\n  effects: non_idempotent\n  idempotency: key\n",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(tmp: pathlib.Path, manifests=None, server: str = ""):
    """Starts recoveryd in tmp with ``manifests`` (tool id -> YAML) and
    ``server`` (more lines of the server section); returns its address and
    a function that stops it."""
    binary = os.environ.get("RECOVERYD", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail("set RECOVERYD to a recoveryd binary (tests/stubs/run_all.sh does)")
    shutil.copy(REPO / "config" / "rules.yaml", tmp / "rules.yaml")
    (tmp / "tools.d").mkdir()
    for name, text in (MANIFESTS if manifests is None else manifests).items():
        (tmp / "tools.d" / f"{name}.yaml").write_text(text)
    port = free_port()
    (tmp / "recovery.yaml").write_text(f"""server:
  listen: "127.0.0.1:{port}"
{server}
defaults:
  circuit_breaker: {{failure_threshold: 5, success_threshold: 1, timeout_ms: 60000}}
  retry_policy: {{initial_delay_ms: 10, max_delay_ms: 50, max_attempts: 4}}
tools:
  directory: tools.d
classification:
  rules_file: rules.yaml
metrics:
  listen: ""
""")
    log = open(tmp / "recoveryd.log", "w")
    proc = subprocess.Popen([binary, "--config", str(tmp / "recovery.yaml")],
                            stdout=log, stderr=subprocess.STDOUT)
    addr = f"127.0.0.1:{port}"
    try:
        with grpc.insecure_channel(addr) as ch:
            grpc.channel_ready_future(ch).result(timeout=15)
    except grpc.FutureTimeoutError:
        proc.kill()
        log.close()
        pytest.fail("recoveryd did not start: " + (tmp / "recoveryd.log").read_text()[-2000:])

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()

    return addr, stop


@pytest.fixture(scope="session")
def recoveryd_addr(tmp_path_factory):
    addr, stop = launch(tmp_path_factory.mktemp("recoveryd"))
    yield addr
    stop()


def open_breaker(addr: str, tool: str, failures: int = 2) -> None:
    """Opens tool's breaker by reporting transient failures, as other
    executors would."""
    from recoveryd_client import recovery_pb2 as pb
    from recoveryd_client import recovery_pb2_grpc as pb_grpc
    with grpc.insecure_channel(addr) as ch:
        stub = pb_grpc.RecoveryServiceStub(ch)
        for i in range(failures):
            stub.RecordOutcome(pb.RecordOutcomeRequest(
                tool_id=tool, success=False, attempt=1, turn_id=f"other-{time.monotonic()}",
                error=pb.ToolError(message="connection reset", code="ECONNRESET")), timeout=5)
        state = stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=[tool]), timeout=5)
        assert state.breakers[0].state == pb.BREAKER_STATUS_OPEN, state
