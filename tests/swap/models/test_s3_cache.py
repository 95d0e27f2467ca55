"""The S3 model cache against the test suite's own S3 server: `models install --to s3://…` and
`models sync` fill it; `models pull --from … --hot … --to DIR` (the GPU pods' init container)
copies the hot set into a fresh directory with every SHA-256 checked, and refuses a corrupt object."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from swap.models import registry, s3cache

BUCKET = "visage-models-test"


def fake_model(seed: str, size: int = 4096) -> bytes:
    return hashlib.sha256(seed.encode()).digest() * (size // 32)


@pytest.fixture
def cache(tmp_path) -> dict:
    """A manifest of four small models (ghostly requires its converter; no checksums in the
    manifest, like the packaged one), their files on disk, and an empty prefix in S3."""
    names = ["detector_x", "swapper_x", "converter_x", "enhancer_x"]
    entries = []
    files = {}
    for name in names:
        data = fake_model(name)
        path = tmp_path / "src" / f"{name}.onnx"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        files[name] = path
        entries.append(
            {
                "name": name,
                "kind": "detector",
                "adapter": "yoloface",
                "file": f"{name}.onnx",
                "url": f"https://example.invalid/{name}.onnx",
                "sha256": "",
                "size_bytes": len(data),
                "input_size": [64, 64],
                "template": None,
                "licence": "test",
                "non_commercial": False,
                **({"requires": ["converter_x"]} if name == "swapper_x" else {}),
            }
        )
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"models": entries}))
    return {"manifest": manifest, "files": files, "url": f"s3://{BUCKET}/models-{uuid.uuid4().hex[:8]}"}


def swap_models(*args: str, manifest: Path) -> subprocess.CompletedProcess:
    """`python -m swap models …` as its own process, with the S3 settings of the environment."""
    action, *rest = args
    return subprocess.run(
        [sys.executable, "-m", "swap", "models", action, "--manifest", str(manifest), *rest],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )


def upload_all(cache) -> None:
    for path in cache["files"].values():
        done = swap_models(
            "install", str(path), "--trust-unverified", "--to", cache["url"], manifest=cache["manifest"]
        )
        assert done.returncode == 0, done.stderr


def test_the_init_container_pull_fills_a_fresh_directory_with_the_hot_set_checked(cache, tmp_path):
    upload_all(cache)
    target = tmp_path / "node-local" / "models"
    pulled = swap_models(
        "pull",
        "--from",
        cache["url"],
        "--hot",
        "detector_x,swapper_x",
        "--to",
        str(target),
        manifest=cache["manifest"],
    )
    assert pulled.returncode == 0, pulled.stderr
    # the hot set, with what its models require, and nothing else
    assert sorted(p.name for p in target.iterdir()) == [
        "converter_x.onnx",
        "detector_x.onnx",
        "swapper_x.onnx",
    ]
    for name in ("detector_x", "swapper_x", "converter_x"):
        assert registry.sha256_of(target / f"{name}.onnx") == registry.sha256_of(cache["files"][name])
    assert pulled.stdout.count("SHA-256 verified") == 3

    again = swap_models(
        "pull", "--from", cache["url"], "--hot", "detector_x", "--to", str(target), manifest=cache["manifest"]
    )
    assert again.returncode == 0 and "already there" in again.stdout


def test_a_corrupt_object_is_refused_and_nothing_is_written(cache, tmp_path):
    upload_all(cache)
    location = s3cache.Location.parse(cache["url"])
    client = s3cache.client_from_env()
    bad = fake_model("detector_x")[:-1] + b"\x00"  # one byte changed after the upload
    client.put_object(location.bucket, location.key("detector_x.onnx"), io.BytesIO(bad), len(bad))
    target = tmp_path / "fresh"
    pulled = swap_models(
        "pull", "--from", cache["url"], "--hot", "detector_x", "--to", str(target), manifest=cache["manifest"]
    )
    assert pulled.returncode != 0
    assert "detector_x" in pulled.stderr and "corrupt" in pulled.stderr and "refused" in pulled.stderr
    assert not target.exists() or list(target.iterdir()) == []  # no model, no temp file


def test_a_model_without_a_checksum_anywhere_is_refused(cache, tmp_path):
    location = s3cache.Location.parse(cache["url"])
    client = s3cache.client_from_env()
    if not client.bucket_exists(BUCKET):
        client.make_bucket(BUCKET)
    data = fake_model("enhancer_x")
    client.put_object(
        location.bucket, location.key("enhancer_x.onnx"), io.BytesIO(data), len(data)
    )  # no .sha256
    pulled = swap_models(
        "pull",
        "--from",
        cache["url"],
        "--hot",
        "enhancer_x",
        "--to",
        str(tmp_path / "d"),
        manifest=cache["manifest"],
    )
    assert pulled.returncode != 0 and "no checksum" in pulled.stderr
    assert not (tmp_path / "d" / "enhancer_x.onnx").exists()


def test_the_manifests_checksum_wins_over_the_one_stored_beside(cache, tmp_path):
    upload_all(cache)
    manifest = json.loads(cache["manifest"].read_text())
    manifest["models"][0]["sha256"] = "0" * 64  # the manifest expects other bytes than the bucket holds
    cache["manifest"].write_text(json.dumps(manifest))
    pulled = swap_models(
        "pull",
        "--from",
        cache["url"],
        "--hot",
        "detector_x",
        "--to",
        str(tmp_path / "d"),
        manifest=cache["manifest"],
    )
    assert pulled.returncode != 0 and "corrupt" in pulled.stderr


def test_sync_uploads_every_installed_model(cache, tmp_path):
    models_dir = tmp_path / "installed"
    models_dir.mkdir()
    for name in ("detector_x", "enhancer_x"):
        (models_dir / f"{name}.onnx").write_bytes(cache["files"][name].read_bytes())
    synced = swap_models(
        "sync",
        "--models-dir",
        str(models_dir),
        "--trust-unverified",
        "--to",
        cache["url"],
        manifest=cache["manifest"],
    )
    assert synced.returncode == 0, synced.stderr
    assert synced.stdout.count("uploaded") == 2
    pulled = swap_models(
        "pull",
        "--from",
        cache["url"],
        "--hot",
        "enhancer_x",
        "--to",
        str(tmp_path / "d"),
        manifest=cache["manifest"],
    )
    assert pulled.returncode == 0, pulled.stderr
    assert (tmp_path / "d" / "enhancer_x.onnx").read_bytes() == cache["files"]["enhancer_x"].read_bytes()


def test_a_cold_model_is_fetched_on_first_use_with_its_time_logged_and_observed(
    cache, tmp_path, monkeypatch, caplog
):
    upload_all(cache)
    monkeypatch.setenv(s3cache.CACHE_ENV, cache["url"])
    spec = registry.load_manifest(cache["manifest"])["enhancer_x"]
    observed = []
    s3cache.add_observer(lambda name, seconds, size: observed.append((name, size, seconds >= 0)))
    try:
        with caplog.at_level(logging.INFO, logger="swap.models.s3cache"):
            assert s3cache.fetch_cold(spec, tmp_path / "node")
    finally:
        s3cache._observers.clear()
    assert (tmp_path / "node" / "enhancer_x.onnx").read_bytes() == cache["files"]["enhancer_x"].read_bytes()
    assert observed == [("enhancer_x", spec.size_bytes, True)]
    assert any(
        "enhancer_x fetched from" in r.getMessage() and "SHA-256 verified" in r.getMessage()
        for r in caplog.records
    )
    monkeypatch.delenv(s3cache.CACHE_ENV)
    assert not s3cache.fetch_cold(spec, tmp_path / "other")  # no cache configured: nothing fetched
