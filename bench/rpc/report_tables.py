"""The report's text: one table per configuration with the issue's targets
and PASS/FAIL, the null control's table, the legend, and the checks of
each case (sample answers, statuses, other load, page faults).
"""
from measure import NULL_CONTROL, median
from rpc_cases import CASES

# The targets.
TARGET_RPS_MEMORY = 0.90    # recoveryd (memory store) rps / null rps, at least
TARGET_CPU_MEMORY = 1.15    # recoveryd CPU per call / null CPU per call, at most
TARGET_RPS_REDIS = 0.60     # recoveryd (Redis store) rps / null rps, at least
TARGET_P50_DIFF_US = 15.0   # p50 at concurrency 1, recoveryd - null, at most
TARGET_BREAKER_BYTES = 1024 # memory per tracked breaker, below


def verdict(ok):
    return "PASS" if ok else "FAIL"


def fmt(v, spec="%.1f"):
    return "-" if v is None or v != v else spec % v


def spread(values):
    values = [v for v in values if v == v]
    return "%.2f-%.2f" % (min(values), max(values)) if len(values) > 1 else ""


def table(title, summary, service_label, rps_target, with_latency, cpu_target=True,
          cases=CASES):
    """One line per RPC. Ratios are medians of the per-round ratios (each
    round pairs adjacent runs of the two servers); the range follows."""
    lines = ["", title, "=" * len(title)]
    head = "%-17s %7s %7s %-22s" % ("RPC", "rps0", "rps", "rps ratio [range]")
    if with_latency:
        head += " %6s %6s %-13s %6s %6s %6s %6s %6s %6s %6s" % (
            "p50_0", "p50", "p50 diff", "p99_0", "p99", "g50_0", "g50a", "g50", "p99s0", "p99s")
    head += " %6s %6s %-22s %7s %5s" % ("cpu0", "cpu", "cpu ratio [range]", "cli/srv", "other")
    lines += [head, "-" * len(head)]
    for case in cases:
        row = summary[case.name]
        n, s = row["null"], row[service_label]
        ratio, cratio = median(s["rps_ratios"]), median(s["cpu_ratios"])
        line = "%-17s %7.0f %7.0f %4.2f %-4s %-12s" % (
            case.name, n["rps"], s["rps"], ratio, verdict(ratio >= rps_target),
            "[%s]" % spread(s["rps_ratios"]) if spread(s["rps_ratios"]) else "")
        if with_latency:
            diff = s["c1_p50_us"] - n["c1_p50_us"]
            line += " %6s %6s %6s %-6s %6s %6s %6s %6s %6s %6s %6s" % (
                fmt(n["c1_p50_us"]), fmt(s["c1_p50_us"]), fmt(diff, "%+.1f"),
                verdict(diff <= TARGET_P50_DIFF_US), fmt(n["c1_p99_us"], "%.0f"),
                fmt(s["c1_p99_us"], "%.0f"), fmt(n["ghz_c1_p50_us"]),
                fmt(row["control_p50_us"]), fmt(s["ghz_c1_p50_us"]),
                fmt(n["sat_p99_us"], "%.0f"), fmt(s["sat_p99_us"], "%.0f"))
        line += " %6.1f %6.1f %4.2f %-6s %-10s %3.2f/%3.2f %5.2f" % (
            n["cpu_us"], s["side_cpu_us"], cratio,
            verdict(cratio <= TARGET_CPU_MEMORY) if cpu_target else "(info)",
            "[%s]" % spread(s["cpu_ratios"]) if spread(s["cpu_ratios"]) else "",
            n["client_cpu_us"] / n["cpu_us"] if n["cpu_us"] else 0,
            s["client_cpu_us"] / s["side_cpu_us"] if s["side_cpu_us"] else 0,
            median([n["other_cores"], s["other_cores"]]))
        lines.append(line)
    lines.append("targets: rps ratio >= %.2f; p50 diff <= %.0f us; CPU ratio <= %.2f%s"
                 % (rps_target, TARGET_P50_DIFF_US, TARGET_CPU_MEMORY,
                    "" if cpu_target else " (a memory-store target; shown for information)"))
    return lines


def control_table(summary):
    """The null server against a second null server in the same rounds:
    how far two identical servers' ratios move on this machine."""
    title = "workers=1, the method's own noise: a second null server (null-control) in every round"
    lines = ["", title, "=" * len(title),
             "%-17s %-24s %-24s" % ("RPC", "rps ratio [range]", "cpu ratio [range]")]
    lines.append("-" * len(lines[-1]))
    for case in CASES:
        c = summary[case.name][NULL_CONTROL]
        lines.append("%-17s %4.2f %-19s %4.2f %-19s" % (
            case.name, median(c["rps_ratios"]), "[%s]" % spread(c["rps_ratios"]),
            median(c["cpu_ratios"]), "[%s]" % spread(c["cpu_ratios"])))
    lines.append("two identical servers: a median this far from 1.00 is this machine's "
                 "noise, not a difference between the servers")
    return lines


LEGEND = [
    "legend: 0 = null server, no suffix = recoveryd. rps: h2load, median over rounds.",
    "  p50/p99: us at concurrency 1 (h2load -c1 -m1: one connection, one call at a time; h2load",
    "  does not decode answers). g50: ghz's p50 at concurrency 1, which includes ghz decoding",
    "  the answer; g50a: ghz against the null server answering recoveryd's bytes (the cost of",
    "  decoding that answer in ghz, not in the server). p99s: us under saturation (h2load's",
    "  request log). cpu: server CPU us per call from /proc (recoveryd + redis-server for the",
    "  Redis store). cli/srv: load generator CPU per call / server CPU per call (null/service);",
    "  below 1 means the client had headroom. other: cores busy with processes outside the",
    "  benchmark, or taken by the VM's host (steal), during the runs (high values make the",
    "  figures noisy).",
]


def notes_for(summary, labels):
    lines = []
    for case in CASES:
        row = summary[case.name]
        bits = []
        for label in labels:
            st, first = row["sample"][label]
            bits.append("%s: grpc-status %s %s" % (label, st, first))
            if not row[label]["statuses_ok"]:
                bits.append("%s: ghz saw non-OK statuses" % label)
            if row[label]["h2_failed"]:
                bits.append("%s: h2load failures %d" % (label, row[label]["h2_failed"]))
        for label, state in row["after"].items():
            bits.append("%s breaker after the runs: %s" % (label, state))
        other = median([row[l]["other_cores"] for l in labels])
        bits.append("other load %.2f cores" % other)
        bits.append("page faults per 1,000 calls %s" % ", ".join(
            "%s %.1f" % (l, row[l]["faults_per_kcall"]) for l in labels))
        lines.append("  %-17s %s" % (case.name, "; ".join(bits)))
    return lines
