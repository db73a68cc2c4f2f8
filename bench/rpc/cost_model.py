#!/usr/bin/env python3
"""Sizing from measured per-call costs: how many Redis primaries and
recoveryd cores serve a load of tool calls (docs/REDIS.md, "Cost at scale").

A tool call costs one admission check (Decide without an error), then one
RecordOutcome success, or on failure (rate --failure-rate) one Decide with
the error, which records it. A success sent alone on an unchanging CLOSED
breaker runs no script (--record-us), and so does a batch that holds one
success; a larger batch of successes is a record script run (--run-us), a
batch of failures costs --error-us. A failure sent alone runs no script
(--failure-us) unless it trips the breaker (once per outage, left out). The
first outcome of a tool in each of its window's buckets runs the script too,
which for the loads sized here (hundreds of calls per tool and bucket) is
left out as well. The per-call CPU figures are measured:
redis-server's by bench/rpc/redis_cost.py (--cluster: a primary with a
replica), recoveryd's by bench/rpc/run.sh (docs/PERFORMANCE.md).

With the shipped caches, what reaches Redis per tool and replica, for
evenly loaded tools each seeing Poisson arrivals at rate lam on a replica:
  outcome batches:  (1 - exp(-lam_o * batch_s)) / batch_s per kind of outcome
                    (one flush per batch_s with something in it), of which
                    the share lam_o batch_s exp(-lam_o batch_s) / (1 -
                    exp(-lam_o batch_s)) hold one outcome;
  admission checks: m = lam * exp(-(b + m) * closed_cache_s), solved for m:
                    a check asks Redis when no reply for the tool (a check's
                    or a batch's, b of them per second) came in the last
                    closed_cache_s.
The cache and batch tables are direct-mapped with 1024 entries: the
exp(-(tools - 1) / 1024) of the tools that have an entry to themselves get
the above, the others send every admission check and every outcome.
bench/rpc/cache_yield.py checks this against a measured run.

  bench/rpc/cost_model.py [--tools 1000] [--failure-rate 0.05] [--loads 100000,1000000]
"""
import argparse
import math


CACHE_SLOTS = 1024


def single_share(lam, batch_s):
    """Of the batches of outcomes arriving at rate lam, the share that hold
    one outcome."""
    x = lam * batch_s
    return x * math.exp(-x) / (1 - math.exp(-x)) if x > 0 else 1.0


def per_tool_scripts(lam_admit, lam_ok, lam_fail, closed_s, batch_s, tools=1):
    """Redis requests per second for one tool on one replica: (admission
    checks, success batches, successes sent alone, failure batches, failures
    sent alone), averaged over the tools."""

    def batches(lam):
        return (1 - math.exp(-lam * batch_s)) / batch_s if batch_s > 0 and lam > 0 else lam

    ok, fail = batches(lam_ok), batches(lam_fail)
    admit = lam_admit
    if closed_s > 0:
        for _ in range(100):  # the fixed point of m = lam exp(-(b + m) c)
            admit = lam_admit * math.exp(-(ok + fail + admit) * closed_s)
    alone = math.exp(-(tools - 1) / CACHE_SLOTS)
    return (alone * admit + (1 - alone) * lam_admit, alone * ok, (1 - alone) * lam_ok,
            alone * fail, (1 - alone) * lam_fail)


def size(args, load, cached):
    f = args.failure_rate
    rd_us = args.rd_admit_us + (1 - f) * args.rd_record_us + f * args.rd_error_us
    cores = load * rd_us / 1e6 / args.utilization
    replicas = max(3, math.ceil(cores / args.cores_per_replica))
    per_tool_replica = load / (args.tools * replicas)
    if cached:
        a, sb, s1, eb, e1 = per_tool_scripts(per_tool_replica, per_tool_replica * (1 - f),
                                             per_tool_replica * f, args.closed_cache_ms / 1000,
                                             args.batch_ms / 1000, args.tools)
    else:
        a, sb, s1, eb, e1 = (per_tool_replica, 0.0, per_tool_replica * (1 - f), 0.0,
                             per_tool_replica * f)
    scripts = (a + sb + s1 + eb + e1) * args.tools * replicas
    batch_us = args.record_us
    if args.batch_ms > 0:
        one = single_share(per_tool_replica * (1 - f), args.batch_ms / 1000)
        batch_us = one * args.record_us + (1 - one) * args.run_us
    redis_cpu = (a * args.admit_us + sb * batch_us + s1 * args.record_us +
                 eb * args.error_us + e1 * args.failure_us) * args.tools * replicas / 1e6
    primaries = max(3, math.ceil(redis_cpu / args.utilization))
    return replicas, cores, scripts, redis_cpu, primaries


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--loads", default="100000,1000000", help="tool calls per second")
    p.add_argument("--tools", type=int, default=1000, help="distinct tools, evenly loaded")
    p.add_argument("--failure-rate", type=float, default=0.05)
    p.add_argument("--utilization", type=float, default=0.7, help="of each core, at most")
    # redis-server CPU per request (us), a primary with a replica and full window:
    # bench/rpc/redis_cost.py --cluster with the caches off.
    p.add_argument("--admit-us", type=float, default=11.5)
    p.add_argument("--record-us", type=float, default=17.0)
    p.add_argument("--error-us", type=float, default=35.0,
                   help="a failure through the record script")
    p.add_argument("--failure-us", type=float, default=18.0,
                   help="a failure sent alone below the threshold, without a script")
    p.add_argument("--run-us", type=float, default=35.0,
                   help="a batch of successes (a record script run; at most --error-us)")
    # recoveryd CPU per RPC (us), docs/PERFORMANCE.md, Redis store, workers=1.
    p.add_argument("--rd-admit-us", type=float, default=21.2)
    p.add_argument("--rd-record-us", type=float, default=19.0)
    p.add_argument("--rd-error-us", type=float, default=21.6)
    p.add_argument("--cores-per-replica", type=int, default=1)
    p.add_argument("--closed-cache-ms", type=float, default=250)
    p.add_argument("--batch-ms", type=float, default=5)
    args = p.parse_args()
    print("tools %d, failure rate %.0f%%, cores at most %.0f%% busy, %d core(s) per replica"
          % (args.tools, args.failure_rate * 100, args.utilization * 100,
             args.cores_per_replica))
    print("%12s  %-13s %9s %14s %15s %10s" % ("calls/s", "caches", "replicas", "requests/s",
                                               "Redis CPU (s/s)", "primaries"))
    for load in (int(x) for x in args.loads.split(",")):
        for cached in (True, False):
            replicas, _, scripts, cpu, primaries = size(args, load, cached)
            print("%12d  %-13s %9d %14.0f %15.2f %10d" % (load, "shipped" if cached else "off",
                                                          replicas, scripts, cpu, primaries))


if __name__ == "__main__":
    main()
