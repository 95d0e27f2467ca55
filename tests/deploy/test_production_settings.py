"""The deploy files start production: the settings a pod or compose service would see (the config
map or env file, with the secrets it mounts written to disk) load with VISAGE_PRODUCTION=1, and the
C2PA chain they mount signs a result that reads back as valid.

This is what broke the container images once: production settings gained a required C2PA chain
that no deploy file provided, and `migrate` refused to start.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.kustomize import by_kind, render
from tests.helpers.operator_env import visage_env

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S_SECRETS_DIR = "/run/secrets/visage/"
COMPOSE_SECRETS_DIR = "/run/secrets/"

# What a Django process of the image does first, then one real signature with the mounted chain.
CHECK = """
import io, django
django.setup()
from PIL import Image
from django.conf import settings
from webapp.media import provenance
assert settings.PRODUCTION
assert settings.METRICS_KEY, "/metrics would be open to anyone"
chain = provenance.configured_chain()
buffer = io.BytesIO(); Image.new("RGB", (32, 32), "gray").save(buffer, "JPEG")
claim = provenance.ResultClaim(content_id="deploy-check", title="check.jpg", inputs_sha256="0" * 64,
                               target_sha256="0" * 64, target_media_type="image/jpeg")
signed = provenance.sign(buffer.getvalue(), media_type="image/jpeg", claim=claim)
report = provenance.read(signed, media_type="image/jpeg", trust_anchors_pem=chain.trust_anchors_pem)
assert report.manifest_present and report.validation_state in ("Valid", "Trusted"), report.failures
print("signed by", report.signer, "development" if chain.development else "installation chain")
"""


def start_production(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    base = {
        "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "VISAGE_DATA_DIR": str(tmp_path / "data"),
        "DJANGO_SETTINGS_MODULE": "webapp.settings",  # as manage.py and the WSGI module set it
    }
    return subprocess.run(
        [sys.executable, "-c", CHECK], env={**base, **env}, cwd=REPO, capture_output=True, text=True, timeout=300
    )


def mounted(env: dict[str, str], prefix: str, secrets: dict[str, bytes], directory: Path) -> dict[str, str]:
    """Write the secrets where the env's *_FILE paths point (moved under `directory`)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in secrets.items():
        (directory / name).write_bytes(content)
    moved = {}
    for name, value in env.items():
        if name.endswith("_FILE") and value.startswith(prefix):
            key = value[len(prefix):]
            assert key in secrets, f"{name} names the secret {key!r}, which the deploy files do not provide"
            value = str(directory / key)
        moved[name] = value
    return moved


def generated_chain(tmp_path: Path) -> dict[str, bytes]:
    out = tmp_path / "generated-c2pa"
    subprocess.run(
        [sys.executable, "manage.py", "visage_provenance", "--generate-chain", str(out)],
        cwd=REPO, check=True, capture_output=True, text=True,
    )
    return {"chain.pem": (out / "chain.pem").read_bytes(), "signer.key": (out / "signer.key").read_bytes()}


@pytest.mark.parametrize("overlay", ["dev", "prod"])
def test_each_overlay_starts_production_and_signs(overlay, tmp_path):
    docs = render(overlay)
    config = dict(by_kind(docs, "ConfigMap")["visage-config"]["data"])
    if overlay == "dev":
        secret = by_kind(docs, "Secret")["visage-secrets"]
        secrets = {k: base64.b64decode(v) for k, v in secret.get("data", {}).items()}
        secrets |= {k: v.encode() for k, v in secret.get("stringData", {}).items()}
    else:
        # The prod Secret is made by hand from deploy/README.md: its keys, with the generated chain.
        chain = generated_chain(tmp_path)
        secrets = {
            "secret-key": b"p" * 50, "database-url": b"postgres://visage:pw@db.internal:5432/visage",
            "redis-url": b"redis://:pw@redis.internal:6379/0", "s3-access-key": b"key", "s3-secret-key": b"secret",
            "webhook-secret": b"whsec_cHJvZHVjdGlvbi10ZXN0LXdlYmhvb2stc2VjcmV0", "c2pa-chain": chain["chain.pem"], "c2pa-key": chain["signer.key"],
            "metrics-key": b"prod-metrics-key",
        }
        readme = (DEPLOY / "README.md").read_text()
        for key in secrets:
            assert f"--from-literal={key}=" in readme or f"--from-file={key}=" in readme, key
    env = mounted(config, K8S_SECRETS_DIR, secrets, tmp_path / "secrets")
    started = start_production(env, tmp_path)
    assert started.returncode == 0, started.stderr[-3000:]
    assert "installation chain" in started.stdout  # the mounted chain, never a generated one


def compose_web_env(example: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """What compose's web service sees: the env file, its `environment:`, and the secrets it mounts
    (deploy/README.md's steps write them into deploy/secrets/)."""
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    written = generated_chain(tmp_path) | {"metrics-key": b"compose-metrics-key"}
    files = {name: Path(spec["file"]).name for name, spec in compose["secrets"].items()}
    secrets = {name: written[files[name]] for name in compose["services"]["web"]["secrets"]}
    environment = {k: str(v) for k, v in compose["services"]["web"]["environment"].items()}
    environment |= {"S3_ENDPOINT": "127.0.0.1:9", "REDIS_URL": "redis://127.0.0.1:9/0"}  # never dialled here
    env = mounted({**example, **environment}, COMPOSE_SECRETS_DIR, secrets, tmp_path / "secrets")
    env["VISAGE_DATA_DIR"] = str(tmp_path / "data")
    return env


def env_file(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_compose_starts_production_and_signs(tmp_path):
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    visage = ("migrate", "web", "worker", "gpu-worker", "scheduler")
    # Secrets of other services (Alertmanager's receivers) are not Visage's to start with.
    for service in visage:
        assert set(compose["services"][service]["secrets"]) == set(compose["services"]["web"]["secrets"]), service
    # Prometheus sends the same key, from its own mount of the secret.
    prometheus = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    assert "metrics-key" in compose["services"]["prometheus"]["secrets"]
    # Every scrape of Visage's own /metrics (Triton's metrics port, visage-triton, takes no key).
    jobs = {job["job_name"]: job for job in prometheus["scrape_configs"]}
    for name in ("visage-web", "visage-workers"):
        assert jobs[name]["authorization"]["credentials_file"] == COMPOSE_SECRETS_DIR + "metrics-key", name
    example = env_file(visage_env((DEPLOY / "visage.env.example").read_text()))
    started = start_production(compose_web_env(example, tmp_path), tmp_path)
    assert started.returncode == 0, started.stderr[-3000:]
    assert "installation chain" in started.stdout


@pytest.mark.parametrize("left", ["SECRET_KEY", "DATABASE_URL", "S3_SECRET_KEY", "VISAGE_WEBHOOK_SECRET"])
def test_production_refuses_a_secret_left_as_the_example(left, tmp_path):
    """The example's values are public (this repository): an operator who copies visage.env.example
    and misses one would sign sessions, open the database or storage, or sign webhooks with it."""
    example = env_file((DEPLOY / "visage.env.example").read_text())
    filled = env_file(visage_env((DEPLOY / "visage.env.example").read_text()))
    started = start_production(compose_web_env({**filled, left: example[left]}, tmp_path), tmp_path)
    assert started.returncode != 0
    assert f"{left} is still deploy/visage.env.example's placeholder" in started.stderr


def test_production_refuses_to_start_with_metrics_open(tmp_path):
    filled = env_file(visage_env((DEPLOY / "visage.env.example").read_text()))
    env = compose_web_env(filled, tmp_path)
    del env["VISAGE_METRICS_KEY_FILE"]
    started = start_production(env, tmp_path)
    assert started.returncode != 0 and "VISAGE_METRICS_KEY (or VISAGE_METRICS_KEY_FILE) is required" in started.stderr


def test_production_without_the_chain_refuses_to_start(tmp_path):
    config = dict(by_kind(render("dev"), "ConfigMap")["visage-config"]["data"])
    secret = by_kind(render("dev"), "Secret")["visage-secrets"]
    secrets = {k: base64.b64decode(v) for k, v in secret["data"].items() if not k.startswith("c2pa")}
    env = {k: v for k, v in config.items() if not k.startswith("VISAGE_C2PA")}
    started = start_production(mounted(env, K8S_SECRETS_DIR, secrets, tmp_path / "secrets"), tmp_path)
    assert started.returncode != 0 and "VISAGE_C2PA_CERT" in started.stderr
