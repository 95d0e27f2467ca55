"""`python -m swap models …` against a local HTTP server: verified installs, nothing half-written."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import threading
import zipfile
from pathlib import Path

import pytest

from swap.models import cli, registry

GOOD = b"good model bytes " * 1000
BAD = b"tampered model bytes " * 1000


@pytest.fixture
def server(tmp_path):
    """Serves tmp_path/www on 127.0.0.1 at a free port."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "good.onnx").write_bytes(GOOD)
    (www / "bad.onnx").write_bytes(BAD)
    (www / "loose.onnx").write_bytes(GOOD)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/truncated.onnx":  # the connection drops mid-download
                self.send_response(200)
                self.send_header("Content-Length", str(len(GOOD)))
                self.end_headers()
                self.wfile.write(GOOD[:1000])
                self.wfile.flush()
                self.close_connection = True
                return
            super().do_GET()

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(www)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def entry(name: str, url: str, sha256: str, *, non_commercial: bool = False) -> dict:
    return {
        "name": name, "kind": "swapper", "adapter": "inswapper", "file": f"{name}.onnx", "url": url,
        "sha256": sha256, "size_bytes": len(GOOD), "input_size": [128, 128], "template": "arcface_128",
        "licence": "test licence", "non_commercial": non_commercial, "notes": "",
    }  # fmt: skip


@pytest.fixture
def manifest(tmp_path, server):
    good_sha = hashlib.sha256(GOOD).hexdigest()
    path = tmp_path / "manifest.json"
    models = [
        entry("good", f"{server}/good.onnx", good_sha),
        entry("bad", f"{server}/bad.onnx", good_sha),  # the server hands out other bytes
        entry("loose", f"{server}/loose.onnx", ""),  # no published checksum
        entry("gone", f"{server}/gone.onnx", good_sha),  # 404
        entry("truncated", f"{server}/truncated.onnx", good_sha),
    ]
    path.write_text(json.dumps({"models": models}))
    return path


@pytest.fixture
def models_dir(tmp_path) -> Path:
    return tmp_path / "models"


def run(manifest: Path, models_dir: Path, *args: str) -> int:
    return cli.main(["models", "--manifest", str(manifest), "--models-dir", str(models_dir), *args])


def test_fetch_installs_a_verified_model(manifest, models_dir, capsys):
    assert run(manifest, models_dir, "fetch", "good") == 0
    assert (models_dir / "good.onnx").read_bytes() == GOOD
    assert sorted(p.name for p in models_dir.iterdir()) == ["good.onnx"]
    assert "good: installed" in capsys.readouterr().out


def test_fetch_rejects_a_corrupt_download_and_leaves_nothing(manifest, models_dir, capsys):
    assert run(manifest, models_dir, "fetch", "bad") == 1
    err = capsys.readouterr().err
    assert "SHA-256 mismatch" in err and len(err.strip().splitlines()) == 1
    assert list(models_dir.iterdir()) == []  # no partial file, no temp file


def test_fetch_http_error_is_one_clear_line(manifest, models_dir, capsys):
    assert run(manifest, models_dir, "fetch", "gone") == 1
    assert "HTTP 404" in capsys.readouterr().err
    assert not models_dir.exists() or list(models_dir.iterdir()) == []


def test_fetch_interrupted_download_leaves_nothing(manifest, models_dir, capsys):
    assert run(manifest, models_dir, "fetch", "truncated") == 1
    assert "download failed" in capsys.readouterr().err
    assert list(models_dir.iterdir()) == []


def test_fetch_refuses_unverified_entries_unless_trusted(manifest, models_dir, capsys):
    assert run(manifest, models_dir, "fetch", "loose") == 1
    assert "--trust-unverified" in capsys.readouterr().err
    assert not (models_dir / "loose.onnx").exists()
    assert run(manifest, models_dir, "fetch", "loose", "--trust-unverified") == 0
    assert (models_dir / "loose.onnx").read_bytes() == GOOD


def test_fetch_brings_along_the_models_a_model_requires(tmp_path, server, models_dir, capsys):
    good_sha = hashlib.sha256(GOOD).hexdigest()
    path = tmp_path / "companions.json"
    needy = {**entry("needy", f"{server}/loose.onnx", good_sha), "requires": ["good"]}
    path.write_text(json.dumps({"models": [needy, entry("good", f"{server}/good.onnx", good_sha)]}))
    assert registry.load_manifest(path)["needy"].requires == ("good",)
    assert run(path, models_dir, "fetch", "needy") == 0
    assert sorted(p.name for p in models_dir.iterdir()) == ["good.onnx", "needy.onnx"]
    assert "good: installed (needed by needy)" in capsys.readouterr().out
    assert run(path, models_dir, "fetch", "needy") == 0  # the companion is there: not fetched again
    assert capsys.readouterr().out.strip().splitlines() == ["needy: installed"]


def test_fetch_unknown_model(manifest, models_dir, capsys):
    assert run(manifest, models_dir, "fetch", "nope") == 1
    assert "unknown model 'nope'" in capsys.readouterr().err


def test_base_url_override_points_at_a_mirror(manifest, models_dir, server, monkeypatch, tmp_path):
    data = json.loads(manifest.read_text())
    data["models"][0]["url"] = "https://example.invalid/good.onnx"
    manifest.write_text(json.dumps(data))
    monkeypatch.setenv(registry.BASE_URL_ENV, server)
    assert run(manifest, models_dir, "fetch", "good") == 0
    assert (models_dir / "good.onnx").read_bytes() == GOOD


def test_manifest_env_override(manifest, models_dir, monkeypatch):
    monkeypatch.setenv(registry.MANIFEST_ENV, str(manifest))
    assert cli.main(["models", "--models-dir", str(models_dir), "fetch", "good"]) == 0


def test_install_verifies_the_file(manifest, models_dir, tmp_path, capsys):
    good, bad = tmp_path / "good.onnx", tmp_path / "copy-of-bad.onnx"
    good.write_bytes(GOOD)
    bad.write_bytes(BAD)
    assert run(manifest, models_dir, "install", str(bad), "--name", "good") == 1
    assert "SHA-256 mismatch" in capsys.readouterr().err
    assert not models_dir.exists() or list(models_dir.iterdir()) == []
    assert run(manifest, models_dir, "install", str(good)) == 0
    assert (models_dir / "good.onnx").read_bytes() == GOOD
    assert run(manifest, models_dir, "install", str(tmp_path / "missing.onnx"), "--name", "good") == 1


def test_list_and_verify_report_installed_missing_corrupt(manifest, models_dir, capsys):
    assert run(manifest, models_dir, "fetch", "good") == 0
    assert run(manifest, models_dir, "fetch", "loose", "--trust-unverified") == 0
    capsys.readouterr()

    assert run(manifest, models_dir, "list") == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert " installed " in lines["good"] and " missing " in lines["bad"] and " unverified " in lines["loose"]
    assert "test licence" in lines["good"]

    assert run(manifest, models_dir, "verify") == 1  # "loose" has no checksum to trust
    assert "loose is unverified" in capsys.readouterr().err
    assert run(manifest, models_dir, "verify", "--trust-unverified") == 0
    capsys.readouterr()
    (models_dir / "loose.onnx").unlink()
    assert run(manifest, models_dir, "verify") == 0
    assert "good: installed" in capsys.readouterr().out

    (models_dir / "good.onnx").write_bytes(b"bit rot")
    assert run(manifest, models_dir, "list") == 0
    assert " corrupt " in capsys.readouterr().out
    assert run(manifest, models_dir, "verify") == 1
    assert "good is corrupt" in capsys.readouterr().err


def test_fetch_all_skips_installed_and_fails_on_the_first_bad_one(manifest, models_dir):
    assert run(manifest, models_dir, "fetch", "good") == 0
    assert run(manifest, models_dir, "fetch", "--all") == 1  # "bad" fails verification
    assert sorted(p.name for p in models_dir.iterdir()) == ["good.onnx"]


def test_packaged_manifest_has_no_trusted_checksum_for_facefusion_assets():
    # sha256 "" marks entries we could not verify; fetch refuses them without --trust-unverified.
    for spec in registry.MODELS.values():
        if spec.wheel is not None:  # MediaPipe's: from a pinned wheel, checksums of the wheel and the file
            assert len(spec.wheel.sha256) == 64 and len(spec.sha256) == 64
            continue
        assert spec.url.startswith("https://github.com/facefusion/facefusion-assets/releases/download/")
        assert spec.sha256 == "" or len(spec.sha256) == 64


def test_installed_models_are_readable_by_other_users(manifest, models_dir, tmp_path):
    """The Triton pod runs as uid 10001 while `swap models install` often runs as root: 0644, not
    mkstemp's 0600."""
    import stat

    source = tmp_path / "good.onnx"
    source.write_bytes(GOOD)
    source.chmod(0o600)
    assert run(manifest, models_dir, "install", str(source)) == 0
    assert run(manifest, models_dir, "fetch", "good") == 0  # already there: left as it is
    assert stat.S_IMODE((models_dir / "good.onnx").stat().st_mode) == 0o644


def test_the_models_directory_follows_the_data_directory(monkeypatch, tmp_path):
    """`swap models`, `swap serve` and the workers find the models where the webapp does."""
    from swap.config import PipelineConfig

    monkeypatch.delenv(registry.MODELS_DIR_ENV, raising=False)
    monkeypatch.setenv("VISAGE_DATA_DIR", str(tmp_path / "data"))
    assert registry.default_models_dir() == tmp_path / "data" / "models"
    assert PipelineConfig.from_env().models_dir == tmp_path / "data" / "models"
    monkeypatch.setenv(registry.MODELS_DIR_ENV, str(tmp_path / "elsewhere"))
    assert registry.default_models_dir() == tmp_path / "elsewhere"
    assert PipelineConfig.from_env().models_dir == tmp_path / "elsewhere"


WHEEL = "demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"


def wheel_manifest(tmp_path: Path, wheel_sha256: str) -> Path:
    source = {"requirement": "demo==1.0", "file": WHEEL, "sha256": wheel_sha256, "member": "demo/face.tflite"}
    model = {**entry("demo_face", "https://pypi.org/project/demo/1.0/", hashlib.sha256(GOOD).hexdigest())}
    model.update(file="face.tflite", wheel=source)
    path = tmp_path / "wheel-manifest.json"
    path.write_text(json.dumps({"models": [model], "bundles": {"demo-face": ["demo_face"]}}))
    return path


def write_wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("demo/face.tflite", GOOD)
        archive.writestr("demo-1.0.dist-info/METADATA", "Name: demo")
    return path


def test_install_extracts_a_model_from_its_pinned_wheel(tmp_path, models_dir, capsys):
    wheel = write_wheel(tmp_path / WHEEL)
    manifest = wheel_manifest(tmp_path, hashlib.sha256(wheel.read_bytes()).hexdigest())
    assert run(manifest, models_dir, "install", str(wheel)) == 0
    assert (models_dir / "face.tflite").read_bytes() == GOOD
    assert "demo_face: installed" in capsys.readouterr().out
    assert run(manifest, models_dir, "verify") == 0


def test_install_refuses_a_wheel_whose_checksum_differs(tmp_path, models_dir, capsys):
    wheel = write_wheel(tmp_path / WHEEL)
    manifest = wheel_manifest(tmp_path, "0" * 64)
    assert run(manifest, models_dir, "install", str(wheel)) == 1
    assert "SHA-256 mismatch" in capsys.readouterr().err
    assert not (models_dir / "face.tflite").exists()


def test_list_shows_the_licence_of_every_model_file_including_dlibs(capsys):
    assert cli.main(["models", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("blazeface_full_range", "face_mesh_468", "dlib_hog", "dlib_shape68", "dlib_resnet"):
        assert name in out
    shape68 = next(line for line in out.splitlines() if line.startswith("dlib_shape68"))
    assert "NON-COMMERCIAL" in shape68 and "300-W" in shape68
    mesh = next(line for line in out.splitlines() if line.startswith("face_mesh_468"))
    assert "commercial ok" in mesh and "Apache-2.0" in mesh
