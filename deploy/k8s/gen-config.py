#!/usr/bin/env python3
"""Writes the recovery.yaml that each kustomize layer puts in its ConfigMap.

Kustomize can replace a ConfigMap key but cannot merge YAML inside one, so
each layer keeps only its differences in recovery.patch.yaml and this script
folds them onto the repository's config/recovery.yaml:

    config/recovery.yaml + base/recovery.patch.yaml          -> base/recovery.yaml
    base/recovery.yaml   + overlays/NAME/recovery.patch.yaml -> overlays/NAME/recovery.yaml

Mappings merge key by key; any other value (lists included) replaces.
Run it after editing config/recovery.yaml or a patch:

    python3 deploy/k8s/gen-config.py          # rewrite the files
    python3 deploy/k8s/gen-config.py --check  # exit 1 if a file is stale (the tests do this)
"""
import sys
from pathlib import Path

import yaml

K8S = Path(__file__).resolve().parent
REPO = K8S.parent.parent
SOURCE = REPO / "config" / "recovery.yaml"
# Each layer and the layer its patch applies on top of (None = config/).
LAYERS = {
    "base": None,
    "overlays/single": "base",
    "overlays/production": "base",
    "overlays/production-cluster": "base",
}
HEADER = """\
# recoveryd main configuration for the {layer} layer of deploy/k8s.
# DO NOT EDIT: written by deploy/k8s/gen-config.py from
#   {parent} + {patch}.
# Every key is described in config/recovery.yaml.
"""


def merge(base, patch):
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = merge(base.get(key), value) if key in base else value
        return out
    return patch


def load(path: Path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def rendered() -> dict:
    """{layer: (merged config dict, file text)} for every layer."""
    out = {}
    for layer, parent in LAYERS.items():
        parent_cfg = load(SOURCE) if parent is None else out[parent][0]
        patch_path = K8S / layer / "recovery.patch.yaml"
        cfg = merge(parent_cfg, load(patch_path))
        parent_name = ("config/recovery.yaml" if parent is None
                       else f"deploy/k8s/{parent}/recovery.yaml")
        text = HEADER.format(layer=layer, parent=parent_name,
                             patch=f"deploy/k8s/{layer}/recovery.patch.yaml")
        text += yaml.safe_dump(cfg, sort_keys=False, default_flow_style=False)
        out[layer] = (cfg, text)
    return out


def main(argv):
    check = "--check" in argv
    stale = []
    for layer, (_, text) in rendered().items():
        target = K8S / layer / "recovery.yaml"
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        if check:
            stale.append(str(target.relative_to(REPO)))
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target.relative_to(REPO)}")
    if stale:
        print("stale (run python3 deploy/k8s/gen-config.py): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
