"""C2PA Content Credentials: signed results read back with c2pa-python's Reader, for every format."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from PIL import Image
from skimage import data as skdata

from swap.video import synthetic
from swap.video.synthetic import ClipSpec
from webapp.media import provenance
from webapp.media.aigc import IPTC_SOURCE_TYPE

CLAIM = provenance.ResultClaim(
    content_id="3f6c1a52-0d7e-4a43-9a36-0c8f4cc0d7a1",
    title="3f6c1a52-0d7e-4a43-9a36-0c8f4cc0d7a1.jpg",
    inputs_sha256=provenance.inputs_digest(["a" * 64, "b" * 64]),
    target_sha256="b" * 64,
    target_media_type="image/jpeg",
    engine={"name": "visage-swap", "version": "0.1.0", "swapper": "classical"},
)


def image_bytes(fmt: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(skdata.astronaut()).save(buffer, format=fmt)
    return buffer.getvalue()


def tamper(data: bytes, at: float = 0.6) -> bytes:
    """Change a run of bytes in the media data (well past the headers and the manifest)."""
    changed = bytearray(data)
    start = int(len(changed) * at)
    for i in range(start, start + 16):
        changed[i] ^= 0x5A
    return bytes(changed)


@pytest.mark.parametrize(("fmt", "media_type"), [("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp")])
def test_an_image_round_trips_with_its_assertions(fmt, media_type):
    original = image_bytes(fmt)
    signed = provenance.sign(original, media_type=media_type, claim=CLAIM)
    assert signed != original
    Image.open(io.BytesIO(signed)).load()  # still a valid image

    report = provenance.read(signed, media_type=media_type)
    assert report.manifest_present and report.validation_state == "Trusted", report.failures
    actions = report.assertions["c2pa.actions.v2"]["actions"]
    assert [a["action"] for a in actions] == ["c2pa.created", "c2pa.edited"]
    assert all(a["digitalSourceType"] == IPTC_SOURCE_TYPE for a in actions)
    ours = report.assertions[provenance.ASSERTION_LABEL]
    assert ours["content_id"] == CLAIM.content_id and ours["provider"] == "Visage"
    assert ours["inputs_sha256"] == CLAIM.inputs_sha256 and ours["engine"]["swapper"] == "classical"
    assert [(i["title"], i["relationship"]) for i in report.ingredients] == [("target", "componentOf")]
    assert "thumbnail" not in report.manifest  # no picture of anybody goes into the credentials
    assert report.signer.startswith("Visage content credentials")

    broken = provenance.read(tamper(signed), media_type=media_type)
    assert broken.manifest_present and broken.validation_state == "Invalid" and broken.failures


def test_an_mp4_round_trips_and_tampering_fails(tmp_path):
    clip = tmp_path / "clip.mp4"
    synthetic.write_clip(clip, ClipSpec(width=256, height=256, fps=12, seconds=1.0, audio=True), skdata.astronaut())
    signed = provenance.sign_file(clip, media_type="video/mp4", claim=CLAIM)
    assert signed != clip and signed.stat().st_size > clip.stat().st_size

    report = provenance.read(signed, media_type="video/mp4")
    assert report.validation_state == "Trusted", report.failures
    assert report.assertions[provenance.ASSERTION_LABEL]["content_id"] == CLAIM.content_id
    assert report.assertions["c2pa.actions.v2"]["actions"][0]["digitalSourceType"] == IPTC_SOURCE_TYPE

    broken = provenance.read(tamper(signed.read_bytes(), at=0.5), media_type="video/mp4")
    assert broken.validation_state == "Invalid"


def test_a_file_without_credentials_says_so():
    report = provenance.read(image_bytes("JPEG"), media_type="image/jpeg")
    assert not report.manifest_present and report.summary()["manifest_present"] is False


def test_an_ed25519_chain_from_settings_signs(settings):
    chain, key, _ = provenance.generate_chain(alg="ed25519", service="Visage")
    settings.C2PA_CERT, settings.C2PA_KEY = chain.decode(), key.decode()
    signed = provenance.sign(image_bytes("JPEG"), media_type="image/jpeg", claim=CLAIM)
    report = provenance.read(signed, media_type="image/jpeg")
    assert report.validation_state == "Trusted" and report.alg.lower() == "ed25519"


def test_a_chain_we_do_not_trust_validates_but_is_not_trusted(settings):
    chain, key, _ = provenance.generate_chain(service="Somebody else")
    settings.C2PA_CERT, settings.C2PA_KEY = chain.decode(), key.decode()
    signed = provenance.sign(image_bytes("JPEG"), media_type="image/jpeg", claim=CLAIM)
    settings.C2PA_CERT = settings.C2PA_KEY = ""  # back to our own (development) chain
    report = provenance.read(signed, media_type="image/jpeg")
    assert report.manifest_present and report.validation_state == "Valid"


def test_disabled_provenance_leaves_the_file_alone(settings):
    settings.PROVENANCE_ENABLED = False
    data = image_bytes("JPEG")
    assert provenance.sign(data, media_type="image/jpeg", claim=CLAIM) is data


def test_the_verify_command_prints_the_manifest(tmp_path, capsys):
    path = tmp_path / "result.jpg"
    path.write_bytes(provenance.sign(image_bytes("JPEG"), media_type="image/jpeg", claim=CLAIM))
    call_command("visage_provenance", str(path))
    out = capsys.readouterr().out
    assert "Trusted" in out and CLAIM.content_id in out and "trainedAlgorithmicMedia" in out
    path.write_bytes(tamper(path.read_bytes()))
    with pytest.raises(SystemExit) as exit_info:
        call_command("visage_provenance", str(path))
    assert exit_info.value.code == 1 and "Invalid" in capsys.readouterr().out


def _production_settings(**extra) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("VISAGE_C2PA", "VISAGE_PROVENANCE"))
    }
    env.update(
        VISAGE_PRODUCTION="1", SECRET_KEY="x" * 50, ALLOWED_HOSTS="visage.example", S3_ACCESS_KEY="k",
        S3_SECRET_KEY="s", VISAGE_METRICS_KEY="metrics-key", **extra,
    )
    return subprocess.run(
        [sys.executable, "-c", "import webapp.settings"], env=env, capture_output=True, text=True,
        cwd=Path(__file__).resolve().parents[3],
    )


def test_production_refuses_to_start_without_a_signing_chain(tmp_path):
    refused = _production_settings()
    assert refused.returncode != 0 and "VISAGE_C2PA_CERT" in refused.stderr
    assert _production_settings(VISAGE_PROVENANCE_ENABLED="0").returncode == 0
    chain, key, _ = provenance.generate_chain()
    (tmp_path / "chain.pem").write_bytes(chain)
    (tmp_path / "key.pem").write_bytes(key)
    configured = _production_settings(
        VISAGE_C2PA_CERT_FILE=str(tmp_path / "chain.pem"), VISAGE_C2PA_KEY_FILE=str(tmp_path / "key.pem")
    )
    assert configured.returncode == 0, configured.stderr


def test_marked_pixels_survive_signing():
    """Signing only adds metadata: the decoded pixels are the same."""
    original = image_bytes("PNG")
    signed = provenance.sign(original, media_type="image/png", claim=CLAIM)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(signed))), np.asarray(Image.open(io.BytesIO(original))))
