"""Cross-language conformance run of the client stubs against live
recoveryd servers. tests/stubs/run_conformance.sh builds everything and
calls this.

One turn, one tool, five executors in five languages, in this order:
  1. Go      the tool keeps failing (connection reset): retries, then the
             fifth failure opens the breaker -> fail_fast after 5 calls
  2. Python  admission refused while OPEN -> fail_fast, tool never called
  3. (wait until the breaker timeout has passed: HALF_OPEN)
  4. Node    takes the half-open probe and holds it (its tool blocks)
  5. Java    admission refused: the probe is taken -> fail_fast, never called
  6. Node    the probe succeeds and is recorded with Node's own permit
             (success_threshold is 2, so the breaker stays HALF_OPEN)
  7. C       takes the next probe; its success closes the breaker
  8. GetTurnTrace shows every step, in order.

Then, on a second recoveryd with server.tenants (one tenant per language,
conf-<lang>, and an admin token), each executor runs a non-idempotent
send_email (verify tool find_sent_email) as the admin acting for its own
tenant; the tool's first call times out, so the service answers VERIFY:
  a. the verifier says the email was not sent -> the tool is called again
     and succeeds (two tool calls, one verifier call)
  b. the verifier says it was sent -> the run ends succeeded + verified with
     one tool call, and the success is recorded
Each turn's trace is read with the tenant's own token and must hold exactly
that run's events (ToolTimeout, ToolError, EffectChecked, then
RetrySucceeded for a, ToolSucceeded for b); the admin token acting for any
other language's tenant gets NOT_FOUND.

Then each executor runs once against a port where nothing listens and must
finish through its local fallback (a tool that fails twice, then succeeds).

Prints one PASS/FAIL line per language and a closing count; exits non-zero
on any failure.
"""
import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import grpc

from recoveryd_client import recovery_pb2 as pb
from recoveryd_client import recovery_pb2_grpc as pb_grpc

LANGS = ["go", "python", "node", "java", "c"]
TOOL = "conformance_search"
BREAKER_TIMEOUT_MS = 2000
STEP_TIMEOUT_S = 60

EFFECT_TOOL = "send_email"
VERIFY_TOOL = "find_sent_email"
TENANT_HEADER = "x-recoveryd-tenant"

# The trace of one run of send_email whose first call times out, by what the
# verifier answers. The timeout is a ToolTimeout and a ToolError, and
# EffectChecked says why it is not retried (effect unknown: verify). Not
# sent: the second call's success is a RetrySucceeded. Sent: the success the
# client reports for the first call is a ToolSucceeded.
EXPECTED_VERIFY_TRACE = {
    "false": [("ToolTimeout", "verify"), ("ToolError", "verify"), ("EffectChecked", "verify"),
              ("RetrySucceeded", "")],
    "true": [("ToolTimeout", "verify"), ("ToolError", "verify"), ("EffectChecked", "verify"),
             ("ToolSucceeded", "")],
}

EXPECTED_TRACE = [
    # Go: four retried failures, the fifth opens the breaker
    ("go", "ToolError"), ("go", "Retry"), ("go", "ToolError"), ("go", "Retry"),
    ("go", "ToolError"), ("go", "Retry"), ("go", "ToolError"), ("go", "Retry"),
    ("go", "ToolError"), ("go", "CircuitOpened"), ("go", "FailFast"),
    ("python", "FailFast"),
    ("node", "CircuitHalfOpened"),
    ("java", "FailFast"),
    ("node", "ToolSucceeded"),
    ("c", "CircuitHalfOpened"), ("c", "ToolSucceeded"), ("c", "CircuitClosed"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(root: str, tmp: str, name: str, port: int, server_extra: str = "") -> str:
    """recoveryd's config NAME.yaml, its tool manifests in NAME-tools/."""
    shutil.copy(os.path.join(root, "config", "rules.yaml"), os.path.join(tmp, "rules.yaml"))
    os.makedirs(os.path.join(tmp, f"{name}-tools"), exist_ok=True)
    path = os.path.join(tmp, f"{name}.yaml")
    with open(path, "w") as f:
        f.write(f"""server:
  listen: "127.0.0.1:{port}"
{server_extra}defaults:
  circuit_breaker:
    failure_threshold: 5
    success_threshold: 2
    timeout_ms: {BREAKER_TIMEOUT_MS}
metrics:
  listen: ""
tools:
  directory: {name}-tools
classification:
  rules_file: rules.yaml
""")
    return path


def write_effects_config(root: str, tmp: str, port: int, tokens: dict, admin_token: str) -> str:
    """A recoveryd with one tenant per language and the admin token (token
    files in tmp), a non-idempotent send_email whose effect find_sent_email
    checks (a high threshold: the breaker is not what is tested) and the
    read-only find_sent_email."""
    def token_file(name, token):
        path = os.path.join(tmp, f"{name}.token")
        with open(path, "w") as f:
            f.write(token + "\n")
        os.chmod(path, 0o600)
        return path

    tenants = "".join(f"    - id: {tenant}\n      token_file: {token_file(tenant, token)}\n"
                      for tenant, token in tokens.items())
    server = (f"  tenants:\n{tenants}"
              f"  admin:\n    token_file: {token_file('admin', admin_token)}\n")
    path = write_config(root, tmp, "effects", port, server)
    tools = os.path.join(tmp, "effects-tools")
    with open(os.path.join(tools, f"{EFFECT_TOOL}.yaml"), "w") as f:
        f.write(f"tool:\n  id: {EFFECT_TOOL}\n  effects: non_idempotent\n"
                f"  verify_tool: {VERIFY_TOOL}\n  circuit_breaker:\n    failure_threshold: 100\n")
    with open(os.path.join(tools, f"{VERIFY_TOOL}.yaml"), "w") as f:
        f.write(f"tool:\n  id: {VERIFY_TOOL}\n  effects: none\n  timeout_ms: 2000\n")
    return path


def tenant_of(lang: str) -> str:
    return f"conf-{lang}"


class Conformance:
    def __init__(self, args):
        self.args = args
        self.root = args.root
        self.failures = {lang: [] for lang in LANGS}
        self.tmp = tempfile.mkdtemp(prefix="recoveryd-stubs-conf-")
        self.turn = "conformance-" + uuid.uuid4().hex[:12]

    def command(self, lang: str):
        a, tools = self.args, self.args.tools
        return {
            "go": [os.path.join(tools, "bin", "rd-go-executor")],
            "python": [sys.executable, os.path.join(self.root, "stubs/python/examples/executor.py")],
            "node": ["node", os.path.join(self.root, "stubs/node/examples/executor.js")],
            "java": ["java", "-cp", a.java_cp, "io.recoveryd.client.example.Executor"],
            "c": [os.path.join(tools, "c-build", "rdc_executor")],
        }[lang]

    def argv(self, lang, addr, mode, release="", turn=None, tool=TOOL, extra=()):
        return self.command(lang) + ["--addr", addr, "--turn", self.turn if turn is None else turn,
                                     "--tool", tool, "--mode", mode, "--release", release,
                                     *extra]

    def fail(self, lang, what):
        self.failures[lang].append(what)
        print(f"  [{lang}] check failed: {what}", flush=True)

    def run_executor(self, lang, addr, mode, **kw):
        t0 = time.monotonic()
        p = subprocess.run(self.argv(lang, addr, mode, **kw), capture_output=True, text=True,
                           timeout=STEP_TIMEOUT_S)
        return self.parse(lang, p.stdout, p.stderr, p.returncode), time.monotonic() - t0

    def parse(self, lang, stdout, stderr, rc):
        lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
        if rc != 0 or not lines:
            self.fail(lang, f"executor exited {rc} without a result; stderr: {stderr[-500:]}")
            return {}
        res = json.loads(lines[-1])
        print(f"  [{lang}] {lines[-1]}", flush=True)
        return res

    def expect(self, lang, res, **want):
        for key, value in want.items():
            if res.get(key) != value:
                self.fail(lang, f"{key} = {res.get(key)!r}, expected {value!r}")

    def breaker(self, stub):
        resp = stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=[TOOL]), timeout=2)
        return resp.breakers[0]

    def start_server(self, name="breaker", write=None):
        port = free_port()
        self.addr = f"127.0.0.1:{port}"
        cfg = (write or (lambda p: write_config(self.root, self.tmp, name, p)))(port)
        self.log = open(os.path.join(self.tmp, f"{name}.log"), "w")
        self.server = subprocess.Popen([self.args.recoveryd, "--config", cfg],
                                       stdout=self.log, stderr=subprocess.STDOUT)
        self.channel = grpc.insecure_channel(self.addr)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=15)
        except grpc.FutureTimeoutError:
            self.stop_server()
            raise
        return pb_grpc.RecoveryServiceStub(self.channel)

    def stop_server(self):
        self.channel.close()
        self.server.terminate()
        try:
            self.server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.server.kill()
        self.log.close()

    def scenario(self, stub):
        print(f"live scenario on {self.addr}, turn {self.turn}, tool {TOOL}", flush=True)
        res, _ = self.run_executor("go", self.addr, "fail")
        self.expect("go", res, status="fail_fast", tool_calls=5, fallback=False,
                    actions=["ACTION_PROCEED"] + ["ACTION_RETRY"] * 4 + ["ACTION_FAIL_FAST"])
        if self.breaker(stub).state != pb.BREAKER_STATUS_OPEN:
            self.fail("go", "breaker not OPEN after the Go executor's failures")

        res, _ = self.run_executor("python", self.addr, "succeed")
        self.expect("python", res, status="fail_fast", tool_calls=0, fallback=False,
                    actions=["ACTION_FAIL_FAST"])

        deadline = time.monotonic() + BREAKER_TIMEOUT_MS / 1000 + 5
        while self.breaker(stub).state != pb.BREAKER_STATUS_HALF_OPEN and time.monotonic() < deadline:
            time.sleep(0.05)

        release = os.path.join(self.tmp, "release-node-probe")
        node = subprocess.Popen(self.argv("node", self.addr, "hold", release),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        held = node.stdout.readline().strip() == "HOLDING"
        if not held:
            self.fail("node", "the Node executor's tool was not called (no probe granted)")
        elif not self.breaker(stub).probe_in_flight:
            self.fail("node", "no probe in flight while the Node executor holds it")

        res, _ = self.run_executor("java", self.addr, "succeed")
        self.expect("java", res, status="fail_fast", tool_calls=0, fallback=False,
                    actions=["ACTION_FAIL_FAST"])

        open(release, "w").close()
        try:
            out, err = node.communicate(timeout=STEP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            node.kill()
            out, err = node.communicate()
        res = self.parse("node", out, err, node.returncode)
        self.expect("node", res, status="succeeded", tool_calls=1, permit=True, recorded=True,
                    fallback=False, actions=["ACTION_PROCEED"])
        b = self.breaker(stub)
        if b.state != pb.BREAKER_STATUS_HALF_OPEN or b.consecutive_successes != 1 or b.probe_in_flight:
            self.fail("node", f"after Node's probe: {pb.BreakerStatus.Name(b.state)}, "
                              f"successes {b.consecutive_successes}, probe {b.probe_in_flight}")

        res, _ = self.run_executor("c", self.addr, "succeed")
        self.expect("c", res, status="succeeded", tool_calls=1, permit=True, recorded=True,
                    fallback=False, actions=["ACTION_PROCEED"])
        if self.breaker(stub).state != pb.BREAKER_STATUS_CLOSED:
            self.fail("c", "breaker not CLOSED after the C executor's probe succeeded")

        self.check_trace(stub)

    def check_trace(self, stub):
        trace = stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=self.turn), timeout=2)
        got = [e.event_type for e in trace.events]
        want = [t for _, t in EXPECTED_TRACE]
        print(f"  trace: {' '.join(got)}", flush=True)
        seqs = [e.sequence for e in trace.events]
        if seqs != sorted(seqs) or len(set(seqs)) != len(seqs):
            self.fail("go", f"trace sequence numbers out of order: {seqs}")
        for i, (lang, etype) in enumerate(EXPECTED_TRACE):
            if i >= len(got) or got[i] != etype:
                self.fail(lang, f"trace event {i}: {got[i] if i < len(got) else 'missing'}, "
                                f"expected {etype}")
        for extra in got[len(want):]:
            self.fail("c", f"unexpected trailing trace event {extra}")
        if any(e.tool_id != TOOL for e in trace.events):
            self.fail("go", "a trace event names another tool")
        if list(trace.summary.completed) != [TOOL]:
            self.fail("c", f"summary completed = {list(trace.summary.completed)}")

    def effects_scenario(self):
        """send_email's timeout answered VERIFY, per language in its own
        tenant, through the admin token and the client's tenant option."""
        admin = secrets.token_hex(16)
        tokens = {tenant_of(lang): secrets.token_hex(16) for lang in LANGS}
        stub = self.start_server("effects", lambda port: write_effects_config(
            self.root, self.tmp, port, tokens, admin))
        print(f"VERIFY scenario on {self.addr}: {EFFECT_TOOL} times out once, "
              f"admin token acting for conf-<lang>", flush=True)
        try:
            turns = {}
            for lang in LANGS:
                for happened, name in (("false", "unsent"), ("true", "sent")):
                    turn = f"verify-{lang}-{name}-{uuid.uuid4().hex[:8]}"
                    turns[(lang, happened)] = turn
                    self.run_verify(lang, turn, happened, admin)
            for (lang, happened), turn in turns.items():
                self.check_tenant_trace(stub, lang, turn, happened, tokens, admin)
        finally:
            self.stop_server()

    def run_verify(self, lang, turn, happened, admin):
        res, _ = self.run_executor(lang, self.addr, "timeout-once", turn=turn, tool=EFFECT_TOOL,
                                   extra=["--verify-tool", VERIFY_TOOL, "--happened", happened,
                                          "--token", admin, "--tenant", tenant_of(lang)])
        if happened == "true":
            # the timed-out call did send: reported as a success, never repeated
            self.expect(lang, res, status="succeeded", verified=True, tool_calls=1, verify_calls=1,
                        attempts=1, recorded=True, fallback=False, verify_tool=VERIFY_TOOL,
                        actions=["ACTION_PROCEED", "ACTION_VERIFY"])
        else:
            # it did not: admission again, then the second call succeeds
            self.expect(lang, res, status="succeeded", verified=False, tool_calls=2,
                        verify_calls=1, attempts=2, recorded=True, fallback=False,
                        verify_tool=VERIFY_TOOL,
                        actions=["ACTION_PROCEED", "ACTION_VERIFY", "ACTION_PROCEED"])

    def check_tenant_trace(self, stub, lang, turn, happened, tokens, admin):
        own = [("authorization", f"Bearer {tokens[tenant_of(lang)]}")]
        try:
            trace = stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn), metadata=own, timeout=2)
        except grpc.RpcError as e:
            self.fail(lang, f"trace of {turn} with {tenant_of(lang)}'s token: {e.code().name} "
                            f"{e.details()}")
            return
        got = [(e.event_type, e.decision) for e in trace.events]
        print(f"  [{lang}] {tenant_of(lang)} trace of {turn}: "
              f"{' '.join(f'{t}({d})' if d else t for t, d in got)}", flush=True)
        if got != EXPECTED_VERIFY_TRACE[happened]:
            self.fail(lang, f"trace of {turn}: {got}, expected {EXPECTED_VERIFY_TRACE[happened]}")
        if any(e.tool_id != EFFECT_TOOL for e in trace.events):
            self.fail(lang, f"trace of {turn} names another tool than {EFFECT_TOOL}")
        if list(trace.summary.completed) != [EFFECT_TOOL]:
            self.fail(lang, f"summary of {turn}: completed = {list(trace.summary.completed)}")
        effect = [e.detail for e in trace.events if e.event_type == "EffectChecked"]
        if not effect or not effect[0].startswith("effects non_idempotent, unknown:"):
            self.fail(lang, f"EffectChecked detail of {turn}: {effect}")
        for other in LANGS:
            if other == lang:
                continue
            md = [("authorization", f"Bearer {admin}"), (TENANT_HEADER, tenant_of(other))]
            try:
                stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn), metadata=md, timeout=2)
                self.fail(lang, f"the trace of {turn} is readable in tenant {tenant_of(other)}")
            except grpc.RpcError as e:
                # NOT_FOUND for the turn, not for the tenant (every one is configured)
                if e.code() != grpc.StatusCode.NOT_FOUND or "unknown turn" not in e.details():
                    self.fail(lang, f"trace of {turn} in tenant {tenant_of(other)}: "
                                    f"{e.code().name} {e.details()}, expected NOT_FOUND "
                                    "(unknown turn)")

    def fallback(self):
        dead = f"127.0.0.1:{free_port()}"  # nothing listens here
        print(f"local fallback against {dead} (nothing listening)", flush=True)
        for lang in LANGS:
            res, took = self.run_executor(lang, dead, "flaky")
            self.expect(lang, res, status="succeeded", tool_calls=3, fallback=True,
                        actions=["ACTION_RETRY", "ACTION_RETRY"])
            if took > 15:
                self.fail(lang, f"fallback run took {took:.1f} s")

    def main(self) -> int:
        stub = self.start_server()
        try:
            self.scenario(stub)
        except Exception as e:  # report, do not hide the per-language lines
            for lang in LANGS:
                self.fail(lang, f"scenario aborted: {type(e).__name__}: {e}")
        finally:
            self.stop_server()
        try:
            self.effects_scenario()
        except Exception as e:
            for lang in LANGS:
                self.fail(lang, f"VERIFY scenario aborted: {type(e).__name__}: {e}")
        self.fallback()
        passed = 0
        for lang in LANGS:
            if self.failures[lang]:
                print(f"FAIL {lang}: {'; '.join(self.failures[lang])}")
            else:
                passed += 1
                print(f"PASS {lang}")
        print(f"conformance: {passed} passed, {len(LANGS) - passed} failed")
        if passed == len(LANGS):
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print(f"(server log and config kept in {self.tmp})")
        return 0 if passed == len(LANGS) else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--recoveryd", required=True)
    ap.add_argument("--java-cp", required=True)
    sys.exit(Conformance(ap.parse_args()).main())
