"""A perf profile of each server under the Decide error load: perf record
(cpu-clock), each server's flat profile saved beside the report, and its
share of the server's CPU by cost category.
"""
import os
import re
import shutil
import signal
import subprocess
import time

from rpc_cases import CASES


def profile(args, cfg, work, load, servers):
    """perf record (cpu-clock) of each server under the Decide error load;
    the flat profiles side by side, grouped by cost category."""
    if not shutil.which("perf"):
        return dict(error="perf not installed")
    case = next(c for c in CASES if c.name == "Decide error")
    report = {}
    for s in servers:
        data = os.path.join(work, "perf-%s.data" % s.label)
        rec = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "4999", "-p",
                                str(s.pid), "-o", data], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        load.h2load(s, case, cfg["profile_s"], log_latency=False)
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=60)
        txt = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                              "--sort", "dso,symbol", "--percent-limit", "0.3"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        txt = "\n".join(line.rstrip()[:160] for line in txt.splitlines()) + "\n"
        with open(os.path.join(args.out, "perf-%s.txt" % s.label), "w") as f:
            f.write(txt)
        report[s.label] = parse_perf(txt)
    return report


PERF_CATEGORIES = [
    ("malloc/free", re.compile(r"malloc|free|calloc|realloc|_int_|tcache|arena_get|sysmalloc|"
                               r"unlink_chunk|consolidate")),
    ("locks/atomics", re.compile(r"pthread_mutex|pthread_rwlock|futex|__lll_|spin|sched_yield")),
    ("string/copy", re.compile(r"mem(cpy|move|set|cmp|chr)|str(len|cmp|chr|ncmp|casecmp|dup|"
                               r"ncasecmp|str)|__(memcpy|memmove|memset|strlen|strcmp)")),
    ("logging/printf", re.compile(r"printf|vfprintf|__printf|_IO_|fwrite|fputs|"
                                  r"strftime|gmtime|localtime|rd_log")),
    ("time", re.compile(r"clock_gettime|gettimeofday|__vdso|gpr_now")),
    ("protobuf-c", re.compile(r"protobuf_c")),
    ("kernel", re.compile(r"^\[k\]")),
]


def parse_perf(txt):
    rows = []
    for line in txt.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+(\[[.k]\])\s+(.*)$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()[:90]))
    cats = {}
    for pct, dso, kind, sym in rows:
        label = "other"
        for name, rx in PERF_CATEGORIES:
            if (name == "kernel" and kind == "[k]") or (name != "kernel" and rx.search(sym)):
                label = name
                break
        if label == "other":
            label = "recoveryd code" if dso == "recoveryd" else "other (%s)" % dso
        cats[label] = cats.get(label, 0.0) + pct
    return dict(top=rows[:25], categories=sorted(cats.items(), key=lambda kv: -kv[1]))
