#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/:
# real requests in protobuf text format encoded with protoc, the shipped
# configuration files and small variants, and real error messages. Run it
# again after changing the API or the shipped configuration; the seeds are
# committed, so a fuzz run needs only clang.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
corpus="$here/corpus"
grpc_proto="${GRPC_PROTO_DIR:-/usr/share/grpc-proto}"

# encode TARGET NAME MESSAGE_TYPE PROTO INCLUDE_DIR  (text format on stdin)
encode() {
  local target=$1 name=$2 type=$3 proto=$4 include=$5
  mkdir -p "$corpus/$target"
  protoc --encode="$type" -I"$include" "$include/$proto" > "$corpus/$target/$name"
}
rec() { encode "rpc_$1" "$2" "recovery.v1.$3" recovery/v1/recovery.proto "$repo/proto"; }

rm -rf "$corpus"

rec classify timeout ClassifyRequest <<'T'
tool_id: "flight_search" error { message: "Connection timeout after 30s" kind: ERROR_KIND_TIMEOUT }
T
rec classify http429 ClassifyRequest <<'T'
tool_id: "hotel_search" error { message: "429 Too Many Requests: try again in 1.8s" http_status: 429 }
T
rec classify code ClassifyRequest <<'T'
tool_id: "custom_api" error { code: "insufficient_quota" exception_type: "openai.RateLimitError" source: ERROR_SOURCE_LLM }
T
rec classify grpc ClassifyRequest <<'T'
tool_id: "web_fetch" error { message: "rpc error: code = Unavailable desc = connection refused" grpc_code: 14 source: ERROR_SOURCE_MCP }
T

rec decide admission DecideRequest <<'T'
tool_id: "flight_search" turn_id: "turn-1" executor_id: "exec-1"
T
rec decide retry DecideRequest <<'T'
tool_id: "flight_search" attempt: 1 elapsed_ms: 30000 turn_id: "turn-1" outcome_id: "o-1"
error { message: "Connection timeout after 30s" kind: ERROR_KIND_TIMEOUT }
T
rec decide permanent_plan DecideRequest <<'T'
tool_id: "flight_search" attempt: 1 turn_id: "turn-2"
error { message: "invalid date format" http_status: 400 kind: ERROR_KIND_INVALID_PARAMETERS }
plan { tool_id: "flight_search" }
plan { tool_id: "hotel_search" depends_on: "flight_search" }
plan { tool_id: "compare_prices" depends_on: "flight_search" depends_on: "hotel_search" optional: true }
plan { tool_id: "create_itinerary" depends_on: "compare_prices" default_value: "{}" }
T
rec decide turn_out DecideRequest <<'T'
tool_id: "hotel_search" attempt: 2 elapsed_ms: 1200 turn_id: "turn-3" turn_remaining_ms: 0
error { message: "503 Service Unavailable" http_status: 503 retry_after_ms: 2000 }
T
rec decide probe DecideRequest <<'T'
tool_id: "activity_search" turn_id: "turn-4" permit_id: "p-123" attempt: 0
T

rec record_outcome success RecordOutcomeRequest <<'T'
tool_id: "flight_search" success: true latency_ms: 120 attempt: 1 turn_id: "turn-1" outcome_id: "o-2"
T
rec record_outcome failure RecordOutcomeRequest <<'T'
tool_id: "hotel_search" success: false latency_ms: 30000 attempt: 3 turn_id: "turn-1"
error { message: "read ECONNRESET" code: "ECONNRESET" kind: ERROR_KIND_TRANSPORT_ERROR }
T
rec record_outcome probe RecordOutcomeRequest <<'T'
tool_id: "activity_search" success: true permit_id: "p-123" executor_id: "exec-2"
T

rec get_breaker_state all GetBreakerStateRequest <<'T'
T
rec get_breaker_state named GetBreakerStateRequest <<'T'
tool_ids: "flight_search" tool_ids: "hotel_search" tool_ids: "never_seen"
T

rec get_turn_trace known GetTurnTraceRequest <<'T'
turn_id: "turn-1"
T
rec get_turn_trace empty GetTurnTraceRequest <<'T'
turn_id: ""
T

rec watch_breakers all WatchBreakersRequest <<'T'
T
rec watch_breakers named WatchBreakersRequest <<'T'
tool_ids: "flight_search" tool_ids: "hotel_search"
T

adm() { encode rpc_force_breaker "$1" recovery.v1.ForceBreakerRequest recovery/v1/admin.proto "$repo/proto"; }
adm open <<'T'
tool_id: "flight_search" mode: FORCE_MODE_OPEN ttl_ms: 60000 reason: "provider incident" operator: "oncall"
T
adm closed <<'T'
tool_id: "hotel_search" mode: FORCE_MODE_CLOSED
T
adm reset <<'T'
tool_id: "flight_search" mode: FORCE_MODE_RESET reason: "fixed"
T

health() { encode rpc_health_check "$1" grpc.health.v1.HealthCheckRequest grpc/health/v1/health.proto "$grpc_proto"; }
health all <<'T'
T
health service <<'T'
service: "recovery.v1.RecoveryService"
T

refl() { encode rpc_reflection "$1" grpc.reflection.v1alpha.ServerReflectionRequest grpc/reflection/v1alpha/reflection.proto "$grpc_proto"; }
refl list <<'T'
host: "localhost" list_services: ""
T
refl symbol <<'T'
file_containing_symbol: "recovery.v1.RecoveryService"
T
refl file <<'T'
file_by_filename: "recovery/v1/recovery.proto"
T
refl extension <<'T'
file_containing_extension { containing_type: "recovery.v1.ToolError" extension_number: 100 }
T

# ---- answers for the packer: a byte choosing the message (its index in
# tests/unit/pb_messages.h), then the message ----
# packed NAME INDEX MESSAGE_TYPE  (text format on stdin)
packed() {
  mkdir -p "$corpus/pbpack"
  { printf "\\$(printf '%03o' "$2")"
    protoc --encode="recovery.v1.$3" -I"$repo/proto" "$repo/proto/recovery/v1/recovery.proto"
  } > "$corpus/pbpack/$1"
}
packed decide_retry 1 DecideResponse <<'T'
action: ACTION_RETRY delay_ms: 1250 timeout_ms: 30000 reason: "transient: attempt 1 of 3"
classification { retryability: RETRYABILITY_TRANSIENT category: CATEGORY_EXTERNAL_SERVICE kind: ERROR_KIND_EXECUTION_ERROR rule_id: "http-503" llm_message: "Tool Execution Failed: 503 Service Unavailable" }
breaker { tool_id: "bench_transient" state: BREAKER_STATUS_CLOSED consecutive_failures: 1 failure_threshold: 5 success_threshold: 1 }
trace { event_type: "ToolError" tool_id: "bench_transient" error: "503 Service Unavailable" classification: "transient" timestamp: "2026-11-22T03:00:00.000Z" }
trace { event_type: "Retry" tool_id: "bench_transient" decision: "retry" detail: "attempt 2 in 1250 ms" }
T
packed decide_cascade 1 DecideResponse <<'T'
action: ACTION_PROCEED
cascade { tool_id: "hotel_search" action: CASCADE_ACTION_SKIP reason: "depends on flight_search" }
cascade { tool_id: "create_itinerary" action: CASCADE_ACTION_USE_DEFAULT default_value: "{}" }
T
packed breakers 3 GetBreakerStateResponse <<'T'
breakers { tool_id: "flight_search" state: BREAKER_STATUS_OPEN consecutive_failures: 5 probe_in_flight: true forced: BREAKER_STATUS_OPEN }
breakers { tool_id: "hotel_search" state: BREAKER_STATUS_HALF_OPEN }
T
packed turn_trace 4 GetTurnTraceResponse <<'T'
turn_id: "turn-1"
events { event_type: "ToolTimeout" tool_id: "hotel_search" turn_id: "turn-1" }
summary { completed: "flight_search" timed_out: "hotel_search" partial_result: "Completed flight search, but hotel search timed out" }
T

# ---- configuration files ----
mkdir -p "$corpus/config" "$corpus/rules"
cp "$repo/config/recovery.yaml" "$corpus/config/shipped"
cat > "$corpus/config/minimal" <<'Y'
classification:
  rules_file: rules.yaml
Y
cat > "$corpus/config/ops" <<'Y'
server: {listen: "127.0.0.1:0", workers: 1, shutdown_grace_ms: 100, drain_delay_ms: 0,
         max_connection_age_ms: 60000, keepalive_time_ms: 10000}
store: {backend: memory, max_tools: 10, max_turns: 5, max_events_per_turn: 3}
metrics: {listen: "127.0.0.1:0", max_tools: 5}
log: {level: warn}
reload: {watch: false}
defaults:
  retry_policy: {strategy: exponential_backoff, initial_delay_ms: 50, max_delay_ms: 50,
                 multiplier: 1.0, jitter_percent: 0, max_attempts: 2, max_total_time_ms: 100}
  circuit_breaker: {failure_threshold: 1, success_threshold: 2, timeout_ms: 1000}
turn: {timeout_ms: 1000}
tools: {directory: tools.d, reject_unknown: true}
classification: {rules_file: rules.yaml}
Y
cat > "$corpus/config/redis" <<'Y'
store:
  backend: redis
  redis:
    address: "127.0.0.1:6379"
    db: 2
    key_prefix: "rd:"
    command_timeout_ms: 200
    connect_timeout_ms: 200
    sentinels: ["127.0.0.1:26379", "127.0.0.1:26380"]
    master_name: mymaster
classification: {rules_file: rules.yaml}
Y

cp "$repo/config/rules.yaml" "$corpus/rules/shipped"
cat > "$corpus/rules/small" <<'Y'
unknown: {retryability: permanent}
rules:
  - id: http.rate
    when: {http_status: [429]}
    result: {retryability: transient, category: external_service, suggestion: "slow down"}
  - id: text.timeout
    when: {message: ["timed out", "\\btimeout\\b", "deadline exceeded"]}
    result: {retryability: transient, category: transient, kind: timeout}
  - id: mixed.github
    when: {http_status: [403], message: ["rate limit"]}
    result: {retryability: transient, category: external_service}
  - id: tool.web
    when: {tool: ["web_*"], source: [tool], exception_type: [ConnectError], code: [ECONNRESET]}
    result: {retryability: transient, category: transient}
Y
cat > "$corpus/rules/suggestions" <<'Y'
suggestions:
  transient: "t"
  unknown: "u"
rules:
  - id: k
    when: {kind: [timeout, invalid_parameters], grpc_code: [4, 14]}
    result: {retryability: transient, category: resource}
Y

# ---- classifier: 6 header bytes (kind, source, http hi/lo, grpc code, tool) + text ----
mkdir -p "$corpus/classify"
seed() { # NAME KIND SOURCE HTTP GRPC TOOL TEXT
  printf "\\x$(printf %02x "$2")\\x$(printf %02x "$3")\\x$(printf %02x $(($4 >> 8)))\\x$(printf %02x $(($4 & 255)))\\x$(printf %02x "$5")\\x$(printf %02x "$6")%s" "$7" \
    > "$corpus/classify/$1"
}
seed timeout 6 1 0 0 0 "Connection timeout after 30s"
seed http429 0 1 429 0 1 "429 Too Many Requests. Retry-After: 30"
seed grpc 0 3 0 14 2 "rpc error: code = Unavailable desc = connection refused"
seed dns 7 1 0 0 3 "getaddrinfo ENOTFOUND api.example.com"
seed quota 0 2 429 0 4 "You exceeded your current quota: insufficient_quota"
seed github 0 1 403 0 5 "API rate limit exceeded for 10.0.0.1. try again in 5m"
seed cancel 5 0 0 1 6 "context canceled"
seed binary 8 1 500 0 7 $'\xff\xfe invalid utf-8 \xc3\x28 Traceback (most recent call last)'
# ---- the request readers: the Decide requests above, then the Classify and
# RecordOutcome ones (every reader reads every seed) ----
cp -r "$corpus/rpc_decide" "$corpus/requests"
for f in "$corpus"/rpc_classify/* "$corpus"/rpc_record_outcome/*; do
  kind=$(basename "$(dirname "$f")")
  cp "$f" "$corpus/requests/${kind#rpc_}_$(basename "$f")"
done

echo "seeds: $(find "$corpus" -type f | wc -l) files in $(ls "$corpus" | wc -l) corpora"
