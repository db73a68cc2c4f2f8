"""Helpers of the deployment tests: rendering kustomizations, finding
objects in the result, and what the repository says the values must be."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
K8S = REPO / "deploy" / "k8s"
OVERLAYS = ["overlays/single", "overlays/production", "overlays/production-cluster"]
LAYERS = ["base", *OVERLAYS]


def render(kustomize: list[str], directory: Path) -> list[dict]:
    """Renders a kustomization offline; the ConfigMap reads config/ from
    outside deploy/k8s, hence the load restrictor."""
    proc = subprocess.run([*kustomize, "--load-restrictor", "LoadRestrictionsNone",
                           str(directory)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (f"{' '.join(kustomize)} {directory} failed:\n"
                                  f"{proc.stderr}")
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def one(objects: list[dict], kind: str, name: str | None = None) -> dict:
    found = [o for o in objects if o["kind"] == kind
             and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, (f"expected one {kind} {name or ''}, found "
                             f"{[o['metadata']['name'] for o in found]}")
    return found[0]


def all_of(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


def container(deployment: dict, name: str = "recoveryd") -> dict:
    return next(c for c in deployment["spec"]["template"]["spec"]["containers"]
                if c["name"] == name)


def config_path_arg(c: dict) -> str:
    args = c.get("args", [])
    assert "--config" in args, f"container {c['name']} has no --config argument: {args}"
    return args[args.index("--config") + 1]


def config_volume(deployment: dict) -> tuple[dict, dict]:
    """The (volume, mount) that carries recovery.yaml."""
    spec = deployment["spec"]["template"]["spec"]
    cfg_dir = str(Path(config_path_arg(container(deployment))).parent)
    mounts = [m for m in container(deployment)["volumeMounts"] if m["mountPath"] == cfg_dir]
    assert len(mounts) == 1, f"no single volume mounted at the --config directory {cfg_dir}"
    volume = next(v for v in spec["volumes"] if v["name"] == mounts[0]["name"])
    return volume, mounts[0]


def recovery_yaml(objects: list[dict], deployment: dict) -> dict:
    """The recovery.yaml the pod reads, parsed, from the rendered ConfigMap."""
    volume, _ = config_volume(deployment)
    cm = one(objects, "ConfigMap", volume["configMap"]["name"])
    main = Path(config_path_arg(container(deployment))).name
    key = next(i["key"] for i in volume["configMap"]["items"] if i["path"] == main)
    return yaml.safe_load(cm["data"][key])


def materialize_config(objects: list[dict], deployment: dict, target: Path) -> Path:
    """Writes the config directory exactly as the kubelet would project it
    into the pod; returns the path of the main file inside `target`."""
    volume, _ = config_volume(deployment)
    cm = one(objects, "ConfigMap", volume["configMap"]["name"])
    for item in volume["configMap"]["items"]:
        path = target / item["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(cm["data"][item["key"]])
    return target / Path(config_path_arg(container(deployment))).name


def port_of(listen: str) -> int:
    return int(listen.rsplit(":", 1)[1])


def millis(seconds) -> int:
    return int(float(seconds) * 1000)


def api_service_name() -> str:
    """package + service of proto/recovery/v1/recovery.proto: the name the
    health service reports the API under."""
    text = (REPO / "proto/recovery/v1/recovery.proto").read_text()
    package = re.search(r"^package\s+([\w.]+)\s*;", text, re.M).group(1)
    service = re.search(r"^service\s+(\w+)", text, re.M).group(1)
    return f"{package}.{service}"


def source_version() -> str:
    """The project's version: the top-level VERSION file, which the build
    stamps into recoveryd --version and the client packages."""
    return (REPO / "VERSION").read_text().strip()
