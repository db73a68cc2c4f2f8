"""The measurement rounds of one configuration: per case, throughput rounds
that run every server back to back in a rotating order (fresh processes
each round), then latency rounds and the decoding control; the medians
over the rounds.
"""
import os
import statistics
import sys

from answer_samples import answer_bytes, breaker_line, sample_answer
from procstat import free_port
from rpc_cases import CASES
from server_procs import Server, restart_all

# A second null server in the workers=1 rounds: its ratios to the first
# show how far two identical servers drift apart on this machine.
NULL_CONTROL = "null-control"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def median(values):
    values = [v for v in values if v is not None and v == v]
    return statistics.median(values) if values else float("nan")


def decoding_control(load, case, service, cfg, rounds):
    """ghz's p50 at concurrency 1 against the null server answering every
    call with the bytes of one of the service's answers: what ghz itself
    spends on receiving and decoding that answer, which the plain null
    server's empty answer does not cost it."""
    path = os.path.join(load.work, "answer-%s.bin" % case.body)
    with open(path, "wb") as f:
        f.write(answer_bytes(service.port, case, load.bodies))
    p = free_port()
    null = Server("null-answer", [load.args.null_server, "--listen", "127.0.0.1:%d" % p,
                                  "--workers", "1", "--answer", path], p, service.cores,
                  load.work).start()
    try:
        return [load.ghz(null, case, cfg["ghz1_n"], 1, 1)["p50_us"] for _ in range(rounds)]
    finally:
        null.stop()


def rotated(servers, r):
    """The servers in round r's order: rotated every round so drift in
    background load does not favour one."""
    k = r % len(servers)
    return servers[k:] + servers[:k]


def measure_config(load, servers, cfg, rounds, h2load_s, with_ghz, control_of=None,
                   cases=CASES, restart=True):
    """Per case: throughput rounds, each running every server back to back,
    then (with_ghz) latency rounds that add h2load -c1 and ghz figures to
    the first latency_rounds rounds of each server (except the null
    control, which is only there for the throughput rounds). With
    control_of (a server's label), also the decoding control of each case.
    With restart, every throughput round starts each server afresh."""
    results = {}
    for case in cases:
        per = {s.label: [] for s in servers}
        for r in range(rounds):
            if restart:
                restart_all(servers)
            for s in rotated(servers, r):
                log("  %-16s round %d/%d  %s" % (case.name, r + 1, rounds, s.label))
                load.h2load(s, case, cfg["warmup_s"], log_latency=False)
                per[s.label].append(dict(h2=load.h2load(s, case, h2load_s)))
        latency_rounds = min(rounds, cfg["latency_rounds"]) if with_ghz else 0
        for r in range(latency_rounds):
            for s in rotated([s for s in servers if s.label != NULL_CONTROL], r):
                log("  %-16s latency %d/%d  %s" % (case.name, r + 1, latency_rounds, s.label))
                one = per[s.label][r]
                one["h1"] = load.h2load_c1(s, case, cfg["ghz1_n"])
                one["c1"] = load.ghz(s, case, cfg["ghz1_n"], 1, 1)
                one["sat"] = load.ghz(s, case, cfg["ghzsat_n"], 32, 4)
        samples = {s.label: sample_answer(s.port, case, load.bodies) for s in servers}
        results[case.name] = dict(runs=per, sample=samples)
        if latency_rounds and control_of:
            results[case.name]["control"] = decoding_control(
                load, case, servers[[s.label for s in servers].index(control_of)], cfg,
                latency_rounds)
        if case.companion:  # the breaker must still be closed after the runs
            results[case.name]["after"] = {
                s.label: breaker_line(s.port, "bench_transient", load)
                for s in servers if s.label not in ("null", NULL_CONTROL)}
    return results


def summarize(results, labels, cases=CASES):
    """Medians over rounds per server and case."""
    out = {}
    for case in cases:
        runs = results[case.name]["runs"]
        row = {}
        for label in labels:
            rs = runs[label]
            nul = runs["null"]
            row[label] = dict(
                rps_ratios=[a["h2"]["rps"] / b["h2"]["rps"] for a, b in zip(rs, nul)],
                cpu_ratios=[a["h2"]["side_cpu_us"] / b["h2"]["server_cpu_us"]
                            for a, b in zip(rs, nul)],
                side_cpu_us=median([r["h2"]["side_cpu_us"] for r in rs]),
                rps=median([r["h2"]["rps"] for r in rs]),
                cpu_us=median([r["h2"]["server_cpu_us"] for r in rs]),
                server_cores=median([r["h2"]["server_cores"] for r in rs]),
                client_cpu_us=median([r["h2"]["client_cpu_us"] for r in rs]),
                client_cores=median([r["h2"]["client_cores"] for r in rs]),
                other_cores=median([r["h2"]["other_cores"] for r in rs]),
                faults_per_kcall=median([r["h2"]["faults_per_kcall"] for r in rs]),
                sat_p99_us=median([r["h2"].get("sat_p99_us") for r in rs]),
                c1_p50_us=median([r["h1"]["p50_us"] for r in rs if "h1" in r]),
                c1_p99_us=median([r["h1"]["p99_us"] for r in rs if "h1" in r]),
                ghz_c1_p50_us=median([r["c1"]["p50_us"] for r in rs if "c1" in r]),
                ghz_sat_p99_us=median([r["sat"]["p99_us"] for r in rs if "sat" in r]),
                statuses_ok=all(r[k]["all_ok"] for r in rs for k in ("c1", "sat") if k in r),
                h2_failed=sum(r["h2"]["failed"] + r["h2"]["errored"] for r in rs))
        row["sample"] = results[case.name]["sample"]
        row["control_p50_us"] = median(results[case.name].get("control") or [None])
        row["after"] = results[case.name].get("after", {})
        out[case.name] = row
    return out
