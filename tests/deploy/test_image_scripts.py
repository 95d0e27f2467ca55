"""The helper scripts the image build runs (deploy/image/)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

IMAGE = Path(__file__).resolve().parents[2] / "deploy" / "image"
PYPROJECT = IMAGE.parents[1] / "pyproject.toml"


def requirements(*extras: str) -> list[str]:
    result = subprocess.run([sys.executable, str(IMAGE / "requirements.py"), str(PYPROJECT), *extras],
                            capture_output=True, text=True, check=True)
    return result.stdout.splitlines()


def test_each_role_gets_the_core_and_only_its_extras():
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    optional = project["optional-dependencies"]
    web = requirements("cpu", "video", "engine")
    assert web[: len(project["dependencies"])] == project["dependencies"]
    assert not any(r.startswith(("torch", "open-clip", "onnxruntime-gpu", "nudenet")) for r in web)
    gpu = requirements("gpu")
    assert set(optional["gpu"]) <= set(gpu) and not any(r.startswith("onnxruntime>") for r in gpu)
    # `all` names the other extras through "visage[...]": expanded, never passed on as a package.
    everything = requirements("all")
    assert not any(r.startswith("visage") for r in everything)
    assert set(optional["moderation"]) <= set(everything) and set(optional["embedded"]) <= set(everything)


def test_an_unknown_extra_stops_the_build():
    result = subprocess.run([sys.executable, str(IMAGE / "requirements.py"), str(PYPROJECT), "gpus"],
                            capture_output=True, text=True)
    assert result.returncode != 0 and "unknown extra 'gpus'" in result.stderr


def test_the_gpu_check_fails_where_the_cpu_onnxruntime_is_installed():
    """This venv has the CPU build only, as a gpu-worker image would if the CPU build shadowed it."""
    import importlib.metadata

    try:
        importlib.metadata.version("onnxruntime-gpu")
        pytest.skip("onnxruntime-gpu is installed here")
    except importlib.metadata.PackageNotFoundError:
        pass
    result = subprocess.run([sys.executable, str(IMAGE / "check_onnxruntime.py")], capture_output=True, text=True)
    assert result.returncode == 1
    assert "shadows 'onnxruntime-gpu'" in result.stderr and "'onnxruntime-gpu' is not installed" in result.stderr


def test_the_wheelhouse_holds_every_extra_an_image_installs():
    import re

    makefile = (IMAGE.parents[1] / "Makefile").read_text()
    wheelhouse = set(re.search(r"pip wheel[^\n]*\n\s*'\.\[([a-z,-]+)\]'", makefile).group(1).split(","))
    containerfile = (IMAGE.parent / "Containerfile").read_text()
    installed = set()
    for extras in re.findall(r"requirements\.py /build/pyproject\.toml ([a-z -]+) >", containerfile):
        installed |= set(extras.split())
    assert installed and installed <= wheelhouse, f"missing from `make wheelhouse`: {installed - wheelhouse}"
