#!/bin/sh
# Writes redis.conf and sentinel.conf for one pod of the recoveryd-redis
# StatefulSet into $CONF_DIR (an emptyDir: Sentinel rewrites its own file).
#
# Which master to follow: whatever a reachable Sentinel says; only when no
# Sentinel answers (the very first start of the set) does pod 0 become the
# master and the others its replicas. A restarted old master therefore
# rejoins as a replica of the master the Sentinels promoted meanwhile.
#
# The password is read from $PASSWORD_FILE and written only into the two
# config files (mode 0600), never onto a command line.
set -eu

CONF_DIR=${CONF_DIR:-/conf}
PASSWORD_FILE=${PASSWORD_FILE:-/var/run/secrets/redis/password}
SERVICE=${SERVICE:-recoveryd-redis}
MASTER_NAME=${MASTER_NAME:-recoveryd}
REPLICAS=${REPLICAS:-3}
QUORUM=${QUORUM:-2}
REDIS_PORT=${REDIS_PORT:-6379}
SENTINEL_PORT=${SENTINEL_PORT:-26379}
POD=${POD_NAME:-$(hostname)}
SET=${POD%-*}
SELF=${ANNOUNCE_HOST:-$POD.$SERVICE}
# Host name of pod N (tests point these at loopback).
peer() { echo "${PEER_HOST_PATTERN:-$SET-%d.$SERVICE}" | sed "s/%d/$1/"; }

PASSWORD=$(cat "$PASSWORD_FILE")
if [ -z "$PASSWORD" ]; then
  echo "redis-init: $PASSWORD_FILE is empty: the Secret recoveryd-redis has no password." >&2
  echo "redis-init: set one in your overlay (secretGenerator recoveryd-redis, behavior: replace;" >&2
  echo "redis-init: deploy/k8s/components/redis-sentinel/kustomization.yaml shows how)." >&2
  exit 1
fi

master=""
i=0
while [ "$i" -lt "$REPLICAS" ]; do
  answer=$(timeout 3 redis-cli -h "$(peer "$i")" -p "$SENTINEL_PORT" --raw \
             sentinel get-master-addr-by-name "$MASTER_NAME" 2>/dev/null | head -n 1) || true
  if [ -n "$answer" ]; then master=$answer; break; fi
  i=$((i + 1))
done
if [ -z "$master" ]; then
  master=$(peer 0)
  echo "redis-init: no Sentinel answered; first start, master is $master"
else
  echo "redis-init: Sentinels name $master as master"
fi

umask 077
mkdir -p "$CONF_DIR"
{
  echo "port $REDIS_PORT"
  echo "bind * -::*"
  echo "dir $CONF_DIR"
  # Breakers, traces and outcome ids are soft state with TTLs: no disk.
  echo 'save ""'
  echo "appendonly no"
  echo "maxmemory ${REDIS_MAXMEMORY:-400mb}"
  # Under memory pressure drop what has a TTL (turn traces, outcome ids)
  # before anything else.
  echo "maxmemory-policy volatile-lru"
  echo "requirepass $PASSWORD"
  echo "masterauth $PASSWORD"
  echo "replica-announce-ip $SELF"
  if [ "$master" != "$SELF" ]; then
    echo "replicaof $master $REDIS_PORT"
  fi
} > "$CONF_DIR/redis.conf"
{
  echo "port $SENTINEL_PORT"
  echo "bind * -::*"
  echo "dir $CONF_DIR"
  echo "sentinel resolve-hostnames yes"
  echo "sentinel announce-hostnames yes"
  echo "sentinel announce-ip $SELF"
  echo "sentinel monitor $MASTER_NAME $master $REDIS_PORT $QUORUM"
  echo "sentinel auth-pass $MASTER_NAME $PASSWORD"
  echo "sentinel down-after-milliseconds $MASTER_NAME ${DOWN_AFTER_MS:-5000}"
  echo "sentinel failover-timeout $MASTER_NAME ${FAILOVER_TIMEOUT_MS:-60000}"
  echo "sentinel parallel-syncs $MASTER_NAME 1"
} > "$CONF_DIR/sentinel.conf"
