#!/bin/bash
# Container health check: exit 0 when recoveryd's /healthz on the metrics
# port answers 200, 1 otherwise (not listening, NOT_SERVING, no answer).
# Pure bash (/dev/tcp), so the runtime image needs no HTTP client.
#   RECOVERYD_HEALTH_HOST (default 127.0.0.1), RECOVERYD_HEALTH_PORT (default 9464)
host=${RECOVERYD_HEALTH_HOST:-127.0.0.1}
port=${RECOVERYD_HEALTH_PORT:-9464}

exec 3<>"/dev/tcp/$host/$port" 2>/dev/null || { echo "unhealthy: nothing listens on $host:$port"; exit 1; }
printf 'GET /healthz HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$host" >&3
if ! IFS= read -r -t 2 status <&3; then
  echo "unhealthy: no answer from $host:$port/healthz"
  exit 1
fi
status=${status%$'\r'}
case "$status" in
  "HTTP/1."?" 200"*) exit 0 ;;
esac
echo "unhealthy: $status"
exit 1
