#!/usr/bin/env bash
# The C client's VERIFY, idempotency-key and tenant handling against live
# recoveryd servers: one with a non-idempotent send_email (verify tool
# find_sent_email) and a charge_card that honours an idempotency key, one
# with two tenants and an admin token. The checks are in
# stubs/c/tests/verify_tenant_test.c.
# Usage: test_c_verify_tenant.sh RECOVERYD VERIFY_TENANT_TEST
set -euo pipefail
recoveryd="$(realpath "$1")"
test_bin="$(realpath "$2")"
. "$(dirname "$0")/live_lib.sh"
cp "$root/config/rules.yaml" rules.yaml

# start NAME PORT SERVER_YAML: a recoveryd with tools in NAME-tools and that server section
start() {
  cat > "$1.yaml" <<YAML
server:
  listen: "127.0.0.1:$2"
$3
metrics:
  listen: ""
tools:
  directory: $1-tools
classification:
  rules_file: rules.yaml
YAML
  "$recoveryd" --config "$1.yaml" > "$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 150); do
    (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$1.log" >&2
  fail "recoveryd $1 did not start"
}

mkdir effects-tools tenants-tools
# a high breaker threshold: several checks end on an unverified failure
printf 'tool:\n  id: send_email\n  effects: non_idempotent\n  verify_tool: find_sent_email\n  circuit_breaker: {failure_threshold: 100}\n' > effects-tools/send_email.yaml
printf 'tool:\n  id: find_sent_email\n  effects: none\n  timeout_ms: 700\n' > effects-tools/find_sent_email.yaml
printf 'tool:\n  id: charge_card\n  effects: non_idempotent\n  idempotency: key\n' > effects-tools/charge_card.yaml
printf 'tool:\n  id: search\n' > tenants-tools/search.yaml
echo "c-admin-token-0123456789" > admin.token
echo "c-team-a-token-0123456789" > team-a.token
echo "c-team-b-token-0123456789" > team-b.token

effects_port=$(free_port)
start effects "$effects_port" ""
tenants_port=$(free_port)
start tenants "$tenants_port" "  tenants:
    - id: team-a
      token_file: $tmp/team-a.token
    - id: team-b
      token_file: $tmp/team-b.token
  admin:
    token_file: $tmp/admin.token"

"$test_bin" "127.0.0.1:$effects_port" "127.0.0.1:$tenants_port" \
  c-admin-token-0123456789 c-team-a-token-0123456789 c-team-b-token-0123456789 ||
  fail "verify_tenant_test failed (logs: $(tail -3 effects.log tenants.log))"
