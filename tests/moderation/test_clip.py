"""CLIP zero-shot: a tiny open_clip model through the real loading path; disabled when unconfigured."""

from __future__ import annotations

import numpy as np
import pytest

from moderation import clip, selectors

pytestmark = pytest.mark.django_db


def test_tiny_checkpoint_loads_from_settings_and_scores_every_prompt(
    tiny_clip, settings, astronaut_rgb, monkeypatch
):
    for name, value in tiny_clip.items():
        setattr(settings, name, value)
    monkeypatch.setattr(clip, "_classifier", None)  # as in a fresh process: another test may have loaded it
    assert clip.status() == "configured"
    finding = clip.check(np.ascontiguousarray(astronaut_rgb[:, :, ::-1]), role="target")
    assert finding.outcome in ("pass", "review", "reject")
    probabilities = finding.detail["probabilities"]
    assert set(probabilities) == {
        "explicit sexual content",
        "graphic violence",
        "a photo of a child",
        "an ordinary photo",
    }
    assert sum(probabilities.values()) == pytest.approx(1.0, abs=1e-3)
    assert finding.detail["model"] == "visage-tiny-clip"
    assert clip.status() == "ready"
    assert selectors.readiness_report()["clip"] == "ready"


def test_per_prompt_thresholds_decide(tiny_clip, settings, astronaut_rgb):
    for name, value in tiny_clip.items():
        setattr(settings, name, value)
    # Two prompts: one of them has at least 0.5; with a reject threshold of 0 on both, it must reject.
    settings.VISAGE_CLIP_PROMPTS = {
        "graphic violence": {"reject": 0.0},
        "explicit sexual content": {"reject": 0.0},
    }
    finding = clip.check(np.ascontiguousarray(astronaut_rgb[:, :, ::-1]), role="target")
    assert finding.outcome == "reject" and finding.code == "content_rejected"
    assert finding.detail["prompt"] in settings.VISAGE_CLIP_PROMPTS
    settings.VISAGE_CLIP_PROMPTS = {"graphic violence": {"review": 1.01}, "an ordinary photo": None}
    assert clip.check(np.ascontiguousarray(astronaut_rgb[:, :, ::-1]), role="target").outcome == "pass"


def test_no_checkpoint_is_reported_disabled_never_passed(settings, astronaut_rgb, client):
    settings.VISAGE_CLIP_CHECKPOINT = ""
    finding = clip.check(np.ascontiguousarray(astronaut_rgb[:, :, ::-1]), role="target")
    assert finding.outcome == "disabled"
    assert "disabled" in selectors.readiness_report()["clip"]
    health = client.get("/healthz").json()
    assert health["checks"]["moderation"]["clip"].startswith("disabled")


def test_missing_checkpoint_file_is_an_error(settings, tmp_path, astronaut_rgb):
    settings.VISAGE_CLIP_CHECKPOINT = str(tmp_path / "nope.pt")
    assert selectors.readiness_report()["clip"].startswith("error")
    finding = clip.check(np.ascontiguousarray(astronaut_rgb[:, :, ::-1]), role="target")
    assert finding.outcome == "error"  # holds the job for review: a broken check never passes content


def test_a_jobs_images_are_scored_in_one_forward_pass_with_the_single_image_results(
    tiny_clip, settings, astronaut_rgb
):
    for name, value in tiny_clip.items():
        setattr(settings, name, value)
    images = [np.ascontiguousarray(astronaut_rgb[:, :, ::-1]), np.ascontiguousarray(astronaut_rgb[::-1, ::-1, ::-1]),
              np.full((300, 200, 3), 90, np.uint8)]
    roles = ["source", "source", "target"]
    single = [clip.check(image, role=role) for image, role in zip(images, roles, strict=True)]
    calls = clip.get_classifier().calls
    batched = clip.check_many(images, roles=roles)
    assert clip.get_classifier().calls == calls + 1
    assert [f.role for f in batched] == roles
    for one, many in zip(single, batched, strict=True):
        assert many.outcome == one.outcome and many.detail["prompt"] == one.detail["prompt"]
        for prompt, value in one.detail["probabilities"].items():
            assert many.detail["probabilities"][prompt] == pytest.approx(value, abs=1e-3)
