"""Podman for the image tests, as it works on a bare Debian bookworm root
(and inside the chroot .ci/run makes): rootful, daemonless, the vfs storage
driver (no overlay module or fuse needed) in a storage directory of its own,
runc (crun refuses a cgroup v1 host whose /sys/fs/cgroup is a tmpfs), and
explicit ulimits (podman lowers its own RLIMIT_NPROC to 32768 before it
starts the runtime, which then may not raise it back without
CAP_SYS_RESOURCE).

No image registry is reachable here, so the Dockerfile's base image is a
Debian bookworm root made by debootstrap --variant=minbase and imported as
a local image. The root's tarball is cached for a week, like .ci/run's.

Environment:
  RD_IMAGE_CACHE  the tarball and podman's storage (default /var/cache/recoveryd-image)
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CACHE = Path(os.environ.get("RD_IMAGE_CACHE", "/var/cache/recoveryd-image"))
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
BASE_IMAGE = "localhost/debian-minbase:bookworm"
BASE_MAX_AGE_S = 7 * 86400
PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def podman() -> list[str]:
    return ["podman", "--root", str(CACHE / "storage"), "--runroot", str(CACHE / "run"),
            "--storage-driver", "vfs", "--runtime", "runc", "--cgroup-manager", "cgroupfs"]


def buildah() -> list[str]:
    """buildah on the same storage as podman()."""
    return ["buildah", "--root", str(CACHE / "storage"), "--runroot", str(CACHE / "run"),
            "--storage-driver", "vfs"]


def ulimits() -> list[str]:
    """The limits the runtime may set: at most this process's own."""
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    nofile = 65536 if nofile == resource.RLIM_INFINITY else min(nofile, 65536)
    nproc = 32768 if nproc == resource.RLIM_INFINITY else min(nproc, 32768)
    return ["--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", f"nproc={nproc}:{nproc}"]


def missing_tools() -> list[str]:
    return [t for t in ("podman", "buildah", "runc", "debootstrap") if not shutil.which(t)]


def _copy_network_settings(root: Path) -> None:
    """This machine's apt sources and apt proxy settings, as .ci/run copies
    them: how this machine reaches the Debian archive is not the image's
    business, but the build stage's apt-get needs it."""
    for src in [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*.list"),
                *Path("/etc/apt/sources.list.d").glob("*.sources")]:
        if src.is_file():
            shutil.copy2(src, root / str(src).lstrip("/"))
    if any(Path("/etc/apt/sources.list.d").glob("*.sources")) and not Path(
            "/etc/apt/sources.list").is_file():
        (root / "etc/apt/sources.list").unlink(missing_ok=True)
    for src in Path("/etc/apt/apt.conf.d").glob("*"):
        text = src.read_text(errors="replace") if src.is_file() else ""
        if "Acquire::" in text or "Proxy" in text:
            shutil.copy2(src, root / str(src).lstrip("/"))


def base_tarball() -> Path:
    """The cached minbase root as a tarball, bootstrapped when absent or
    older than a week."""
    tar = CACHE / f"{SUITE}-minbase.tar"
    if tar.is_file() and time.time() - tar.stat().st_mtime < BASE_MAX_AGE_S:
        return tar
    CACHE.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(dir=CACHE, prefix="bootstrap."))
    try:
        log = CACHE / "debootstrap.log"
        with open(log, "w") as out:
            proc = subprocess.run(["debootstrap", "--variant=minbase", SUITE, str(root), MIRROR],
                                  stdout=out, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            raise RuntimeError(f"debootstrap {SUITE} failed: {log.read_text()[-2000:]}")
        _copy_network_settings(root)
        for d in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for f in (root / d).glob("*"):
                if f.is_file():
                    f.unlink()
        root.chmod(0o755)  # the image's / must be reachable by its non-root user
        subprocess.run(["tar", "-C", str(root), "-cf", f"{tar}.new", "."], check=True)
        os.replace(f"{tar}.new", tar)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return tar


def base_image() -> str:
    """BASE_IMAGE in podman's storage, imported from the tarball; imported
    again when the tarball is newer than the image."""
    tar = base_tarball()
    stamp = CACHE / "base-image.stamp"
    have = subprocess.run([*podman(), "image", "exists", BASE_IMAGE]).returncode == 0
    if not have or not stamp.exists() or stamp.stat().st_mtime < tar.stat().st_mtime:
        subprocess.run([*podman(), "import", "--change", f"ENV {PATH_ENV}",
                        "--change", 'CMD ["/bin/bash"]', str(tar), BASE_IMAGE],
                       check=True, stdout=subprocess.DEVNULL)
        stamp.touch()
    return BASE_IMAGE
