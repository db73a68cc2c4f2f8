#!/usr/bin/env bash
# The C client against a live recoveryd with server.tls (mutual TLS) and
# server.auth: the example executor (stubs/c/examples/executor.c) must get
# real decisions with the CA, its client certificate and the token, and must
# end on its local fallback (the service refused it) with a wrong token,
# without the client certificate, with another CA, or in plaintext. Then the
# round_robin policy over a target with two addresses (two recoveryd): both
# get calls, where the default policy sends every call to the first.
# Certificates are made with openssl in a temporary directory.
# Usage: test_c_tls_auth.sh RECOVERYD EXECUTOR
set -euo pipefail
recoveryd="$(realpath "$1")"
executor="$(realpath "$2")"
. "$(dirname "$0")/live_lib.sh"
ossl() { openssl "$@" >/dev/null 2>&1 || fail "openssl $*"; }
for ca in ca other_ca; do
  ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=recoveryd test $ca" -keyout $ca.key -out $ca.crt
done
echo "subjectAltName=DNS:localhost,IP:127.0.0.1" > san.cnf
for name in server client; do
  ossl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" -keyout $name.key -out $name.csr
  extra=(); [ $name = server ] && extra=(-extfile san.cnf)
  ossl x509 -req -in $name.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out $name.crt "${extra[@]}"
done
echo "c-client-secret" > token
cp "$root/config/rules.yaml" rules.yaml
mkdir -p tools.d

# start NAME PORT SERVER_YAML: a recoveryd with that server section
start() {
  cat > "$1.yaml" <<YAML
server:
  listen: "127.0.0.1:$2"
$3
metrics:
  listen: "127.0.0.1:0"
tools:
  directory: tools.d
classification:
  rules_file: rules.yaml
YAML
  "$recoveryd" --config "$1.yaml" > "$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$1.log" >&2
  fail "recoveryd $1 did not start"
}

port=$(free_port)
start secure "$port" "  tls: {cert_file: $tmp/server.crt, key_file: $tmp/server.key, client_ca_file: $tmp/ca.crt}
  auth: {token_file: $tmp/token}"

run() { "$executor" --addr "$1" --turn "t-$RANDOM" --tool c_tls_tool --mode succeed "${@:2}"; }
expect() { # expect WHAT OUTPUT PATTERN
  grep -q -- "$3" <<<"$2" || fail "$1: expected $3 in: $2"
  echo "ok: $1"
}
good=(--ca ca.crt --cert client.crt --key client.key --token c-client-secret)

out=$(run "localhost:$port" "${good[@]}")
expect "TLS + client certificate + token: real decisions" "$out" '"status":"succeeded".*"fallback":false.*"recorded":true'
out=$(run "localhost:$port" --ca ca.crt --cert client.crt --key client.key --token wrong)
expect "wrong token: refused, local fallback" "$out" '"fallback":true'
out=$(run "localhost:$port" --ca ca.crt --token c-client-secret)
expect "no client certificate: refused, local fallback" "$out" '"fallback":true'
out=$(run "localhost:$port" --ca other_ca.crt --cert client.crt --key client.key --token c-client-secret)
expect "another CA: refused, local fallback" "$out" '"fallback":true'
out=$(run "localhost:$port" --token c-client-secret)
expect "plaintext: refused, local fallback" "$out" '"fallback":true'
grep -qi "auth" secure.log || fail "the server did not log the refused token"
if "$executor" --addr "localhost:$port" --ca missing.crt >/dev/null 2>err.txt; then
  fail "a missing CA file was accepted"
fi
expect "missing CA file: clear error" "$(cat err.txt)" "tls_ca_file: cannot open missing.crt"

# Token on plaintext loopback, two servers behind one target, round_robin.
p1=$(free_port); p2=$(free_port)
start rr1 "$p1" "  auth: {token_file: $tmp/token}"
start rr2 "$p2" "  auth: {token_file: $tmp/token}"
out=$(run "ipv4:127.0.0.1:$p1,127.0.0.1:$p2" --lb round_robin --token c-client-secret)
expect "round_robin over two addresses with a token" "$out" '"status":"succeeded".*"fallback":false.*"recorded":true'
# Where the calls went: each server keeps its own breakers (memory store),
# so a tool's failure count on each shows which server got its Decide calls.
py="${RD_STUB_TOOLS:-$root/build-stubs-tools}/venv/bin/python"
[ -x "$py" ] || fail "no Python venv at $py (scripts/install-stub-deps.sh makes it)"
failures() { # PORT TOOL -> consecutive failures of TOOL on that server
  "$py" - "$1" "$2" <<'PY'
import sys, grpc
from recoveryd_client import recovery_pb2 as pb, recovery_pb2_grpc as pbg
with grpc.insecure_channel(f"127.0.0.1:{sys.argv[1]}") as ch:
    r = pbg.RecoveryServiceStub(ch).GetBreakerState(
        pb.GetBreakerStateRequest(tool_ids=[sys.argv[2]]), timeout=5,
        metadata=[("authorization", "Bearer c-client-secret")])
    print(r.breakers[0].consecutive_failures if r.breakers else 0)
PY
}
both="ipv4:127.0.0.1:$p1,127.0.0.1:$p2"
"$executor" --addr "$both" --tool rr_spread --mode fail --lb round_robin --token c-client-secret >/dev/null
"$executor" --addr "$both" --tool pf_first --mode fail --token c-client-secret >/dev/null
f1=$(failures "$p1" rr_spread); f2=$(failures "$p2" rr_spread)
[ "$f1" -gt 0 ] && [ "$f2" -gt 0 ] || fail "round_robin: failures per server $f1 / $f2, expected calls on both"
echo "ok: round_robin spread the calls over both servers ($f1 / $f2 failures)"
g1=$(failures "$p1" pf_first); g2=$(failures "$p2" pf_first)
[ "$g1" -gt 0 ] && [ "$g2" -eq 0 ] || fail "default policy: failures per server $g1 / $g2, expected all on the first"
echo "ok: without lb_policy every call went to the first address ($g1 / $g2)"
echo "test_c_tls_auth: all passed"
