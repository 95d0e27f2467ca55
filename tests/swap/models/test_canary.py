"""Model versions on disk, the roll-out commands, and the canary router (stable hash of the job id)."""

from __future__ import annotations

import random
import uuid

import pytest

from swap.cli import main
from swap.models import canary, versions


def job_ids(count: int, seed: int = 16) -> list[str]:
    rng = random.Random(seed)
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)]


def rollouts(**canaries: int) -> dict[str, versions.ModelRollout]:
    return {name: versions.ModelRollout(stable=1, canary=version) for name, version in canaries.items()}


def test_a_thousand_jobs_split_by_the_percentage_and_stick():
    ids = job_ids(1000)
    state = rollouts(inswapper_128=2)
    state["arcface_w600k_r50"] = versions.ModelRollout(stable=3)  # no canary: always stable

    first = {job: canary.route(job, 10, state) for job in ids}
    on_canary = [job for job, chosen in first.items() if chosen["inswapper_128"] == 2]
    # 10 % of 1,000: binomial sd ≈ 9.5; these ids are fixed, so this is not a flaky bound.
    assert 70 <= len(on_canary) <= 130
    assert all(chosen["arcface_w600k_r50"] == 3 for chosen in first.values())
    assert {chosen["inswapper_128"] for chosen in first.values()} == {1, 2}

    # Sticky: the same job gets the same versions on every call (a retried job, another worker).
    assert all(canary.route(job, 10, state) == first[job] for job in ids)
    # Raising the percentage only moves jobs onto the canary, never back.
    at_25 = [job for job in ids if canary.route(job, 25, state)["inswapper_128"] == 2]
    assert set(on_canary) <= set(at_25)
    assert 200 <= len(at_25) <= 300
    # The edges.
    assert not any(canary.is_canary(job, 0) for job in ids)
    assert all(canary.is_canary(job, 100) for job in ids)


def test_bucket_is_a_pure_function_of_the_id():
    job = "6f1c2b9e-1111-4222-8333-444455556666"
    assert canary.bucket(job) == canary.bucket(job) == canary.bucket(uuid.UUID(job))
    assert 0 <= canary.bucket(job) < 100
    assert canary.bucket(job) != canary.bucket(job[:-1] + "7")


def install(models_dir, version: int | None = None, content: bytes = b"model") -> None:
    if version is None:
        path = models_dir / "inswapper_128.onnx"
    else:
        path = models_dir / "inswapper_128" / str(version) / "inswapper_128.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)


def test_versions_canary_promote_rollback(tmp_path):
    install(tmp_path)  # version 1 in the classic place
    install(tmp_path, 2, b"model two")
    assert versions.installed_versions("inswapper_128", tmp_path) == [1, 2]
    assert versions.version_path("inswapper_128", 1, tmp_path) == tmp_path / "inswapper_128.onnx"
    assert versions.stable_version("inswapper_128", tmp_path) == 1

    with pytest.raises(versions.VersionError, match="version 3 is not installed"):
        versions.start_canary("inswapper_128", 3, tmp_path)
    with pytest.raises(versions.VersionError, match="no canary to promote"):
        versions.promote("inswapper_128", tmp_path)

    rollout = versions.start_canary("inswapper_128", 2, tmp_path)
    assert (rollout.stable, rollout.canary) == (1, 2)
    assert versions.rollback("inswapper_128", tmp_path).canary is None  # drops the canary
    assert versions.stable_version("inswapper_128", tmp_path) == 1

    versions.start_canary("inswapper_128", 2, tmp_path)
    rollout = versions.promote("inswapper_128", tmp_path)
    assert (rollout.stable, rollout.canary, rollout.previous) == (2, None, [1])
    # The local path loads the stable version's file from now on.
    from swap.models import registry

    assert registry.model_path("inswapper_128", tmp_path).read_bytes() == b"model two"
    rollout = versions.rollback("inswapper_128", tmp_path)  # no canary: back to the previous stable
    assert (rollout.stable, rollout.previous) == (1, [])
    assert registry.model_path("inswapper_128", tmp_path).read_bytes() == b"model"
    with pytest.raises(versions.VersionError, match="nothing|no canary and no earlier"):
        versions.rollback("inswapper_128", tmp_path)


def test_job_routing_records_what_ran(tmp_path):
    install(tmp_path)
    install(tmp_path, 2)
    versions.start_canary("inswapper_128", 2, tmp_path)
    ids = job_ids(200)
    canary_job = next(job for job in ids if canary.is_canary(job, 30))
    stable_job = next(job for job in ids if not canary.is_canary(job, 30))

    with canary.job_routing(canary_job, models_dir=tmp_path, percent=30) as routing:
        assert routing.canary
        assert canary.version_for("inswapper_128", 1) == 2
        assert canary.version_for("gfpgan_1.4", 1) == 1  # no roll-out state: the session's default
        canary.record("inswapper_128", 2)
    assert routing.used == {"inswapper_128": 2}
    with canary.job_routing(stable_job, models_dir=tmp_path, percent=30) as routing:
        assert not routing.canary and canary.version_for("inswapper_128", 1) == 1
    assert canary.current() is None
    canary.record("inswapper_128", 1)  # outside a job: ignored


def test_models_cli_rollout_commands(tmp_path, capsys):
    install(tmp_path)
    source = tmp_path / "new.onnx"
    source.write_bytes(b"version two bytes")
    base = ["models", "--models-dir", str(tmp_path)]
    # Another version than the manifest describes has no checksum to verify: explicit trust needed.
    assert main([*base, "install", str(source), "--name", "inswapper_128", "--version", "2"]) == 1
    assert "no SHA-256" in capsys.readouterr().err
    assert (
        main(
            [*base, "install", str(source), "--name", "inswapper_128", "--version", "2", "--trust-unverified"]
        )
        == 0
    )
    assert (tmp_path / "inswapper_128" / "2" / "inswapper_128.onnx").read_bytes() == b"version two bytes"

    assert main([*base, "canary", "inswapper_128", "2"]) == 0
    assert main([*base, "versions"]) == 0
    assert "installed 1,2" in capsys.readouterr().out
    assert main([*base, "promote", "inswapper_128"]) == 0
    assert "version 2 is stable (was 1)" in capsys.readouterr().out
    assert main([*base, "rollback", "inswapper_128"]) == 0
    assert "stable version 1" in capsys.readouterr().out
    assert main([*base, "promote", "inswapper_128"]) == 1
    assert "no canary to promote" in capsys.readouterr().err


def test_versions_ran_reports_recorded_and_stable_versions(tmp_path):
    install(tmp_path)
    install(tmp_path, 2)
    versions.start_canary("inswapper_128", 2, tmp_path)
    versions.promote("inswapper_128", tmp_path)  # stable 2 now
    backends = {
        "detector": "dlib_hog",
        "swapper": "inswapper_128",
        "enhancer": "gfpgan_1.4",
        "recognizer": None,
    }
    # Local inference: nothing recorded, every versioned backend ran its stable version.
    assert canary.versions_ran(None, backends, tmp_path) == {"inswapper_128": 2, "gfpgan_1.4": 1}
    with canary.job_routing("job-1", models_dir=tmp_path, percent=0) as routing:
        canary.record("inswapper_128", 1)  # what a Triton session actually ran wins
    assert canary.versions_ran(routing, backends, tmp_path) == {"inswapper_128": 1, "gfpgan_1.4": 1}


def test_versions_ran_without_records_reports_the_routed_version(tmp_path):
    install(tmp_path)
    install(tmp_path, 2)
    versions.start_canary("inswapper_128", 2, tmp_path)
    ids = job_ids(100)
    backends = {"swapper": "inswapper_128"}
    for job, expected in ((next(j for j in ids if canary.is_canary(j, 50)), 2),
                          (next(j for j in ids if not canary.is_canary(j, 50)), 1)):  # fmt: skip
        with canary.job_routing(job, models_dir=tmp_path, percent=50) as routing:
            pass  # e.g. a video join: no model ran in this task
        assert canary.versions_ran(routing, backends, tmp_path) == {"inswapper_128": expected}


def test_local_inference_runs_the_canary_for_canary_jobs(tmp_path):
    """Local inference: a model with a canary running gets both versions loaded; each job runs
    the version its id routes to (inswapper: that version's model and emap), and records it."""
    import numpy as np

    from swap.config import RuntimeOptions
    from swap.inference.local import VersionedLocalSession
    from swap.inference.sessions import clear_sessions
    from swap.models import registry
    from swap.models import standins as fx
    from tests.helpers.standin_inputs import LATENT_0, emap_for, face_at, identity, textured_frame

    embedding = np.random.default_rng(7).standard_normal(512).astype(np.float32) * 3
    emap_v2 = emap_for(embedding)
    emap_v2[:, 0] = 0.8 * embedding / np.linalg.norm(embedding)
    fx.make_inswapper(tmp_path / "inswapper_128.onnx", emap=emap_for(embedding))
    fx.make_inswapper(tmp_path / "inswapper_128" / "2" / "inswapper_128.onnx", emap=emap_v2)
    cpu = RuntimeOptions(providers=["CPUExecutionProvider"], intra_op_threads=1)
    frame, face = textured_frame(), [face_at("arcface_128", 128, 10, 10)]
    clear_sessions()

    plain = registry.load_adapter("inswapper_128", tmp_path, cpu)  # no canary: the plain session
    assert not isinstance(plain.session, VersionedLocalSession)

    versions.start_canary("inswapper_128", 2, tmp_path)
    swapper = registry.load_adapter("inswapper_128", tmp_path, cpu)
    assert isinstance(swapper.session, VersionedLocalSession)
    ids = job_ids(100)
    on_canary = next(j for j in ids if canary.is_canary(j, 50))
    on_stable = next(j for j in ids if not canary.is_canary(j, 50))
    with canary.job_routing(on_canary, models_dir=tmp_path, percent=50) as routing:
        result = swapper.swap(identity(embedding), frame, face)
    assert routing.used == {"inswapper_128": 2}
    assert result[74, 74, 0] == round(0.8 * 255)
    with canary.job_routing(on_stable, models_dir=tmp_path, percent=50) as routing:
        result = swapper.swap(identity(embedding), frame, face)
    assert routing.used == {"inswapper_128": 1}
    assert result[74, 74, 0] == round(LATENT_0 * 255)
    np.testing.assert_array_equal(swapper.swap(identity(embedding), frame, face), result)  # no job: stable
    clear_sessions()


def test_percentage_and_rollback_take_effect_on_the_next_job_without_a_restart(tmp_path, capsys):
    """The workers read the roll-out state per job: `models canary --percent` and `rollback` written
    by the CLI change the very next job's versions (same process, nothing rebuilt)."""
    install(tmp_path)
    install(tmp_path, 2)
    base = ["models", "--models-dir", str(tmp_path)]
    ids = job_ids(400)
    low = next(job for job in ids if canary.bucket(job) < 10)  # a canary job at 10 % and 60 %
    mid = next(job for job in ids if 30 <= canary.bucket(job) < 60)  # canary only at 60 %

    def ran(job: str) -> int:
        # The deployment's default (VISAGE_CANARY_PERCENT) is 0: only the file's percentage counts.
        with canary.job_routing(job, models_dir=tmp_path, percent=0):
            return canary.version_for("inswapper_128", 1)

    assert main([*base, "canary", "inswapper_128", "2", "--percent", "10"]) == 0
    assert "10 % of jobs run it" in capsys.readouterr().out
    assert (ran(low), ran(mid)) == (2, 1)
    assert main([*base, "canary", "inswapper_128", "2", "--percent", "60"]) == 0
    assert (ran(low), ran(mid)) == (2, 2)
    with canary.job_routing(mid, models_dir=tmp_path, percent=0) as routing:
        assert routing.canary
    assert main([*base, "versions"]) == 0
    assert "canary 2 at 60 %" in capsys.readouterr().out
    assert main([*base, "rollback", "inswapper_128"]) == 0
    assert (ran(low), ran(mid)) == (1, 1)
    assert main([*base, "canary", "inswapper_128", "2", "--percent", "101"]) == 1
    assert "between 0 and 100" in capsys.readouterr().err
