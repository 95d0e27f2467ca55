"""`python -m swap run`: exit status and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from swap.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def photos(tmp_path_factory, astronaut, other_face):
    folder = tmp_path_factory.mktemp("cli")
    from skimage import data

    cv2.imwrite(str(folder / "source.png"), astronaut)
    cv2.imwrite(str(folder / "target.jpg"), other_face)
    cv2.imwrite(str(folder / "coffee.jpg"), cv2.cvtColor(data.coffee(), cv2.COLOR_RGB2BGR))
    (folder / "notes.jpg").write_bytes(b"not really a jpeg")
    return folder


def test_run_writes_the_swapped_image(photos, capsys):
    out = photos / "out.png"
    code = main(
        [
            "run",
            "--source",
            str(photos / "source.png"),
            "--target",
            str(photos / "target.jpg"),
            "--output",
            str(out),
        ]
    )
    assert code == 0
    image = cv2.imread(str(out))
    assert image.shape == cv2.imread(str(photos / "target.jpg")).shape
    assert "swapped 1 face(s) with classical" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target", "coffee.jpg"], "error: No face was found in the target image."),
        (["--target", "notes.jpg"], "error: The target file is not an image we can read"),
        (["--target", "missing.jpg"], "error: Cannot read the target file"),
        (["--target", "target.jpg", "--face-index", "4"], "error: face_index 4 is out of range"),
        (
            ["--target", "target.jpg", "--swapper", "inswapper_128"],
            "error: Model 'inswapper_128' is not installed",
        ),
    ],
)
def test_errors_exit_non_zero_with_one_line(photos, capsys, extra, message, tmp_path):
    extra = [str(photos / a) if a.endswith(".jpg") else a for a in extra]
    args = [
        "run",
        "--source",
        str(photos / "source.png"),
        "--output",
        str(photos / "x.png"),
        "--models-dir",
        str(tmp_path),
        *extra,
    ]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert err.count("\n") == 1 and "Traceback" not in err


def test_module_entry_point_has_no_traceback(photos):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "swap",
            "run",
            "--source",
            str(photos / "coffee.jpg"),
            "--target",
            str(photos / "target.jpg"),
            "--output",
            str(photos / "y.png"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr == "error: No face was found in the source image.\n"


def test_run_reports_the_mode_that_ran(photos, capsys):
    args = ["run", "--source", str(photos / "source.png"), "--target", str(photos / "target.jpg")]
    assert main([*args, "--output", str(photos / "fast.png"), "--mode", "fast"]) == 0
    assert "with classical (fast)" in capsys.readouterr().out


def test_modes_lists_what_each_mode_does(tmp_path, capsys):
    assert main(["modes", "--models-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fast\n" in out and "standard\n" in out and "hq\n" in out
    assert "multi-band (Laplacian pyramid) blend" in out


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("content", [None, "{not json"], ids=["missing", "not-json"])
def test_a_bad_models_manifest_is_one_line(tmp_path, capsys, content):
    manifest = tmp_path / "manifest.json"
    if content is not None:
        manifest.write_text(content)
    assert main(["models", "list", "--manifest", str(manifest)]) == 1
    assert "cannot read the models manifest" in one_line_error(capsys)


def test_installing_a_missing_wheel_is_one_line(tmp_path, capsys):
    wheel = tmp_path / "mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert main(["models", "install", str(wheel), "--models-dir", str(tmp_path / "models")]) == 1
    assert "is not a file" in one_line_error(capsys)


def test_a_models_folder_that_cannot_be_made_is_one_line(tmp_path, capsys):
    model = tmp_path / "yoloface_8n.onnx"
    model.write_bytes(b"weights")
    (tmp_path / "blocker").write_text("a file, not a folder")
    args = ["models", "install", str(model), "--trust-unverified", "--models-dir", str(tmp_path / "blocker" / "m")]
    assert main(args) == 1
    assert "cannot write into" in one_line_error(capsys)


@pytest.mark.parametrize("action", [["versions"], ["canary", "yoloface_8n", "2"], ["promote", "yoloface_8n"]])
def test_a_damaged_versions_file_is_one_line(tmp_path, capsys, action):
    (tmp_path / "versions.json").write_text("{not json")
    assert main(["models", *action, "--models-dir", str(tmp_path)]) == 1
    assert "unreadable" in one_line_error(capsys)


@pytest.mark.parametrize("env", [{"VISAGE_MAX_PIXELS": "lots"}, {"VISAGE_INFERENCE": "gpu"}])
def test_a_bad_setting_is_one_line(photos, capsys, monkeypatch, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    args = ["run", "--source", str(photos / "source.png"), "--target", str(photos / "target.jpg"),
            "--output", str(photos / "setting.png")]
    assert main(args) == 1
    one_line_error(capsys)


@pytest.mark.parametrize("quality", ["500", "-5", "0"])
def test_a_quality_out_of_range_is_refused(photos, capsys, quality):
    args = ["run", "--source", str(photos / "source.png"), "--target", str(photos / "target.jpg"),
            "--output", str(photos / "q.jpg"), "--quality", quality]
    with pytest.raises(SystemExit) as refused:
        main(args)
    assert refused.value.code == 2 and "--quality" in capsys.readouterr().err
