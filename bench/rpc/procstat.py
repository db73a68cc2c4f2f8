"""The benchmark's processes as the kernel counts them: free ports and the
wait for a server's, CPU ticks, page faults and RSS from /proc, the
machine's busy time, taskset pinning, and the CPU of reaped children (the
load generators).
"""
import os
import socket
import subprocess
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, timeout=15.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError("server exited with %s" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("port %d not open after %.0fs" % (port, timeout))


def proc_cpu_ticks(pid):
    """utime + stime of the whole process (all threads), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def proc_minor_faults(pid):
    """Minor page faults of the whole process so far (a heap trimmed and
    regrown per call shows here)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def proc_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def machine_busy_ticks():
    """Busy ticks of all cores together (everything but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4]


def pin(cores):
    return ["taskset", "-c", cores] if cores else []


def run_child(argv, timeout):
    """Runs argv; returns (stdout, stderr, returncode)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=timeout)
    return out, err, p.returncode


class ChildCpu:
    """CPU seconds used by the children reaped within the block (the load
    generators: h2load and its companion)."""

    def __enter__(self):
        import resource
        self._r = resource
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.start = u.ru_utime + u.ru_stime
        return self

    def __exit__(self, *exc):
        u = self._r.getrusage(self._r.RUSAGE_CHILDREN)
        self.seconds = u.ru_utime + u.ru_stime - self.start
