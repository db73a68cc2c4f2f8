#!/bin/sh
# Two jobs for the recoveryd-redis-cluster StatefulSet.
#
#   redis-cluster-init.sh config   (init container of each pod) writes
#       redis.conf into $CONF_DIR: cluster mode, the pod's stable host name
#       announced, the password from $PASSWORD_FILE (mode 0600, never on a
#       command line). nodes.conf stays in $DATA_DIR so a restarted pod
#       rejoins as the node it was.
#   redis-cluster-init.sh create   (the create Job) waits until all
#       $NODES pods answer, then joins them with redis-cli --cluster create
#       (one replica per primary) unless they already form a cluster.
set -eu

CONF_DIR=${CONF_DIR:-/conf}
DATA_DIR=${DATA_DIR:-/data}
PASSWORD_FILE=${PASSWORD_FILE:-/var/run/secrets/redis/password}
SERVICE=${SERVICE:-recoveryd-redis-cluster}
SET=${SET:-recoveryd-redis-cluster}
NODES=${NODES:-6}
REDIS_PORT=${REDIS_PORT:-6379}
POD=${POD_NAME:-$(hostname)}
# Host name and port of pod N (tests point these at loopback ports).
peer() { echo "${PEER_HOST_PATTERN:-$SET-%d.$SERVICE}" | sed "s/%d/$1/"; }
peer_port() { if [ -n "${PEER_PORT_BASE:-}" ]; then echo $((PEER_PORT_BASE + $1)); else echo "$REDIS_PORT"; fi; }

PASSWORD=$(cat "$PASSWORD_FILE")
if [ -z "$PASSWORD" ]; then
  echo "redis-cluster-init: $PASSWORD_FILE is empty: the Secret recoveryd-redis has no password." >&2
  echo "redis-cluster-init: set one in your overlay (components/redis-cluster/kustomization.yaml says how)." >&2
  exit 1
fi

write_config() {
  self=${ANNOUNCE_HOST:-$POD.$SERVICE}
  umask 077
  mkdir -p "$CONF_DIR" "$DATA_DIR"
  {
    echo "port $REDIS_PORT"
    echo "bind ${BIND:-* -::*}"
    echo "dir $DATA_DIR"
    echo "cluster-enabled yes"
    echo "cluster-config-file nodes.conf"
    echo "cluster-node-timeout ${NODE_TIMEOUT_MS:-5000}"
    # A primary down costs its own slots only (recoveryd answers those
    # degraded until the replica is promoted), not the whole cluster.
    echo "cluster-require-full-coverage no"
    echo "cluster-announce-hostname $self"
    echo "cluster-preferred-endpoint-type hostname"
    echo "repl-diskless-sync-delay 0"
    # Breakers, traces and outcome ids are soft state with TTLs: no disk.
    echo 'save ""'
    echo "appendonly no"
    echo "maxmemory ${REDIS_MAXMEMORY:-400mb}"
    echo "maxmemory-policy volatile-lru"
    echo "requirepass $PASSWORD"
    echo "masterauth $PASSWORD"
  } > "$CONF_DIR/redis.conf"
}

create_cluster() {
  export REDISCLI_AUTH="$PASSWORD"
  nodes=""
  i=0
  while [ "$i" -lt "$NODES" ]; do
    host=$(peer "$i")
    port=$(peer_port "$i")
    until redis-cli -h "$host" -p "$port" ping 2>/dev/null | grep -q PONG; do
      echo "redis-cluster-init: waiting for $host:$port"; sleep 2
    done
    # CLUSTER MEET takes addresses, not names.
    ip=$(getent hosts "$host" | awk 'NR == 1 {print $1}')
    nodes="$nodes ${ip:-$host}:$port"
    i=$((i + 1))
  done
  if redis-cli -h "$(peer 0)" -p "$(peer_port 0)" cluster info | grep -q "cluster_state:ok"; then
    echo "redis-cluster-init: the cluster already exists"; return 0
  fi
  # shellcheck disable=SC2086  # one argument per node
  redis-cli --cluster create $nodes --cluster-replicas 1 --cluster-yes
}

case "${1:-config}" in
  config) write_config ;;
  create) create_cluster ;;
  *) echo "usage: $0 config|create" >&2; exit 2 ;;
esac
