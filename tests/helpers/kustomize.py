"""deploy/k8s rendered the way an operator applies it: `kubectl kustomize` of an overlay."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"


def _kubectl() -> str:
    path = shutil.which("kubectl")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubectl is required under CI=true to render deploy/k8s")
        pytest.skip("kubectl not installed: cannot render deploy/k8s (install the kubectl client)")
    return path


def render(overlay: str) -> list[dict]:
    return render_dir(K8S / "overlays" / overlay)


def render_dir(path: Path) -> list[dict]:
    output = subprocess.run([_kubectl(), "kustomize", str(path)], check=True, capture_output=True, text=True).stdout
    return [doc for doc in yaml.safe_load_all(output) if doc]


def render_base_with(component: str, workdir: Path) -> list[dict]:
    """The base plus one of deploy/k8s/components, as an overlay in `workdir` would add it
    (kustomize takes only relative paths to other directories)."""
    k8s = Path(os.path.relpath(K8S, workdir))
    (workdir / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources: [{k8s / 'base'}]\ncomponents: [{k8s / 'components' / component}]\n"
    )
    return render_dir(workdir)


def by_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}
