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
    """Renders a kustomization offline with kustomize's default options
    (what `kubectl apply -k` and GitOps tools use: no load-restrictor flag)."""
    proc = subprocess.run([*kustomize, str(directory)], capture_output=True, text=True,
                          timeout=120)
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


def merge_fragment(base, over):
    """recoveryd's drop-in rule (server/config/config_merge.h): mappings
    merge key by key, null removes a key, anything else replaces. The
    rendered config is also loaded by the real recoveryd (--check-config),
    which holds this reading to account."""
    if not (isinstance(base, dict) and isinstance(over, dict)):
        return over
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_fragment(out.get(key), value) if key in out else value
    return out


def projected_files(objects: list[dict], deployment: dict) -> dict[str, str]:
    """{path inside the config mount: text}, as the kubelet projects them."""
    volume, _ = config_volume(deployment)
    cm = one(objects, "ConfigMap", volume["configMap"]["name"])
    return {i["path"]: cm["data"][i["key"]] for i in volume["configMap"]["items"]}


def fragments(files: dict[str, str], main: str) -> list[str]:
    """The drop-in fragments recoveryd merges over `main`, in its order."""
    dropin = str(Path(main).with_suffix(".d"))
    return sorted(p for p in files if str(Path(p).parent) == dropin
                  and Path(p).suffix in (".yaml", ".yml") and not Path(p).name.startswith("."))


def recovery_yaml(objects: list[dict], deployment: dict) -> dict:
    """The configuration the pod runs with: recovery.yaml from the rendered
    ConfigMap with its drop-in fragments merged over it."""
    files = projected_files(objects, deployment)
    main = Path(config_path_arg(container(deployment))).name
    cfg = yaml.safe_load(files[main])
    for fragment in fragments(files, main):
        cfg = merge_fragment(cfg, yaml.safe_load(files[fragment]))
    return cfg


def materialize_config(objects: list[dict], deployment: dict, target: Path) -> Path:
    """Writes the config directory exactly as the kubelet would project it
    into the pod; returns the path of the main file inside `target`."""
    for rel, text in projected_files(objects, deployment).items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
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
