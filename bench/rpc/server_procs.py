"""The servers under test as processes: the null server, or recoveryd with
a generated config (memory or Redis store), started pinned and stopped;
fresh processes for every round; a Redis for the Redis store.
"""
import os
import signal
import subprocess

from procstat import free_port, pin, proc_cpu_ticks, wait_for_port
from rpc_cases import ROOT


class Server:
    """A server process under test: the null server, or recoveryd with a
    generated config (memory or Redis store)."""

    def __init__(self, label, argv, port, cores, work):
        self.label, self.argv, self.port, self.cores = label, argv, port, cores
        self.work, self.proc = work, None
        self.also_pids = []  # server-side helpers whose CPU counts too (redis-server)

    def start(self):
        out = open(os.path.join(self.work, self.label + ".log"), "a")
        self.proc = subprocess.Popen(pin(self.cores) + self.argv, stdout=out, stderr=out)
        wait_for_port(self.port, self.proc)
        return self

    @property
    def pid(self):
        return self.proc.pid

    def cpu_ticks(self):
        """(own ticks, own + helpers' ticks)"""
        own = proc_cpu_ticks(self.pid)
        return own, own + sum(proc_cpu_ticks(p) for p in self.also_pids)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def write_config(work, name, port, workers, redis_port=None, max_tools=200000,
                 redis_extra=""):
    """The shipped config's values except: the listen port, the worker count,
    the failure threshold (10000, see decide_error.txtpb), room for the
    memory test's tools and a free metrics port (and redis_extra, lines of
    store.redis). Logging, metrics and config watching stay on, as in
    production."""
    store = "  backend: memory\n"
    if redis_port:
        store = ('  backend: redis\n  redis:\n    address: "127.0.0.1:%d"\n'
                 '    key_prefix: "bench:"\n%s' % (redis_port, redis_extra))
    text = (
        "server:\n  listen: \"127.0.0.1:%d\"\n  workers: %d\n"
        "store:\n%s  max_tools: %d\n"
        "defaults:\n  circuit_breaker:\n    failure_threshold: 10000\n"
        "tools:\n  directory: %s\n"
        "classification:\n  rules_file: %s\n"
        "metrics:\n  listen: \"127.0.0.1:%d\"\n"
        % (port, workers, store, max_tools, os.path.join(ROOT, "config", "tools.d"),
           os.path.join(ROOT, "config", "rules.yaml"), free_port()))
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def start_redis(work, cores):
    port = free_port()
    argv = pin(cores) + ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                         "--save", "", "--appendonly", "no", "--dir", work]
    out = open(os.path.join(work, "redis.log"), "w")
    proc = subprocess.Popen(argv, stdout=out, stderr=out)
    wait_for_port(port, proc)
    return proc, port


def restart_all(servers):
    """Fresh processes for the next round. Two starts of one binary can
    differ by a few percent for the whole of their lives (where the
    loader and the kernel put their code and heap); a new pair every
    round turns that into noise the median averages out, instead of a
    bias every round of the run shares."""
    for s in servers:
        s.stop()
    for s in servers:
        s.start()
