"""deploy/compose.yaml: the single-host stack has every part, wired to the queues and files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from django.conf import settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())  # resolves the x-visage merge keys


def defaults(value: str) -> str:
    """The value compose gives `${NAME:-default}` when NAME is not set."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)


def queues(service: dict) -> list[str]:
    command = service["command"]
    return defaults(command[command.index("--queues") + 1]).split(",")


def test_every_part_of_the_stack_is_a_service():
    services = compose()["services"]
    assert set(services) == {"postgres", "redis", "minio", "migrate", "web", "worker", "gpu-worker", "scheduler",
                             "prometheus", "alertmanager", "grafana", "triton", "triton-nvidia"}
    assert services["redis"]["command"][services["redis"]["command"].index("--appendonly") + 1] == "yes"
    assert services["migrate"]["command"] == ["migrate"] and services["migrate"]["restart"] == "no"
    assert services["scheduler"]["command"] == ["python", "manage.py", "visage_scheduler"]
    assert services["scheduler"]["healthcheck"]["test"] == ["CMD", "python", "manage.py", "visage_scheduler_probe"]
    for name in ("web", "worker", "gpu-worker", "scheduler"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
        assert services[name]["read_only"] is True and services[name]["environment"]["VISAGE_PRODUCTION"] == "1"


def test_workers_take_the_queues_of_the_code_and_the_gpu_worker_a_gpu():
    services = compose()["services"]
    assert queues(services["gpu-worker"]) == list(settings.GPU_QUEUES)
    assert set(queues(services["worker"])) == {settings.MODERATION_QUEUE, settings.WEBHOOK_QUEUE}
    devices = services["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}]
    assert "deploy" not in services["worker"]


def test_triton_is_an_optional_profile_on_the_gpu_reading_the_workers_models():
    """`--profile triton` adds Triton; without it the stack runs the models in the workers. Its
    metrics port is the serve command's default and Prometheus finds it by DNS (no target, so
    no VisageTargetDown, while the profile is off)."""
    services = compose()["services"]
    triton = services["triton"]
    assert triton["profiles"] == ["triton"] and triton["command"] == ["triton"]
    assert triton["deploy"] == services["gpu-worker"]["deploy"]
    assert "models:/models:ro" in triton["volumes"] and triton["read_only"] is True
    assert all("profiles" not in service for name, service in services.items() if not name.startswith("triton"))
    # NVIDIA's image instead (profile triton-nvidia): the same name on the network, the same GPU,
    # the repository `models repository --out` writes into the workers' models volume, polled.
    nvidia = services["triton-nvidia"]
    assert nvidia["profiles"] == ["triton-nvidia"] and nvidia["networks"]["default"]["aliases"] == ["triton"]
    assert defaults(nvidia["image"]).startswith("nvcr.io/nvidia/tritonserver:")
    assert nvidia["deploy"] == triton["deploy"] and "models:/models:ro" in nvidia["volumes"]
    flags = dict(arg.split("=", 1) for arg in nvidia["command"][1:])
    assert flags["--model-control-mode"] == "poll"
    assert flags["--model-repository"].startswith(services["worker"]["environment"]["VISAGE_MODELS_DIR"] + "/")
    prometheus = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    job = next(j for j in prometheus["scrape_configs"] if j["job_name"] == "visage-triton")
    assert job["dns_sd_configs"] == [{"names": ["triton"], "type": "A", "port": 8002}]


def test_images_are_the_ones_make_images_builds():
    makefile = (DEPLOY.parent / "Makefile").read_text()
    prefix = re.search(r"^IMAGE_PREFIX \?= (\S+)", makefile, re.M).group(1)
    targets = re.search(r"^IMAGE_TARGETS \?= (.+)$", makefile, re.M).group(1).split()
    services = compose()["services"]
    for target in targets:
        assert defaults(services[target]["image"]) == f"{prefix}{target}:latest"
    containerfile = (DEPLOY / "Containerfile").read_text()
    for target in targets:
        assert re.search(rf"^FROM \S+ AS {target}$", containerfile, re.M), target


def test_mounted_monitoring_files_exist():
    prometheus = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    for rule_file in prometheus["rule_files"]:
        assert (DEPLOY / "prometheus" / Path(rule_file).name).exists(), rule_file
    for volume in compose()["services"]["grafana"]["volumes"]:
        source = volume.split(":")[0]
        if source.startswith("./"):
            assert (DEPLOY / source).is_dir(), source


def test_env_example_sets_what_production_requires():
    example = dict(
        line.split("=", 1) for line in (DEPLOY / "visage.env.example").read_text().splitlines()
        if line and not line.startswith("#")
    )
    for name in ("SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "S3_ACCESS_KEY", "S3_SECRET_KEY",
                 "POSTGRES_PASSWORD", "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"):
        assert example.get(name), name
    assert example["MINIO_ROOT_USER"] == example["S3_ACCESS_KEY"]
    assert example["POSTGRES_PASSWORD"] in example["DATABASE_URL"]


def test_every_image_and_published_port_can_be_overridden():
    """A mirror or an air-gapped registry replaces any image by a variable
    (VISAGE_POSTGRES_IMAGE=registry.internal/postgres:16, VISAGE_IMAGE_PREFIX, VISAGE_IMAGE_TAG),
    and a host whose ports are taken moves the published ones; unset, the official images."""
    services = compose()["services"]
    official = {
        "postgres": "docker.io/library/postgres:16-bookworm", "redis": "docker.io/library/redis:7-bookworm",
        "minio": "quay.io/minio/minio:latest", "prometheus": "docker.io/prom/prometheus:latest",
        "grafana": "docker.io/grafana/grafana:latest", "alertmanager": "docker.io/prom/alertmanager:latest",
    }
    for name, service in services.items():
        assert re.search(r"\$\{VISAGE_\w+:-", service["image"]), name
        if name in official:
            assert defaults(service["image"]) == official[name]
        for port in service.get("ports", []):
            assert re.search(r"\$\{VISAGE_\w+_PORT:-\d+\}:\d+$", port), (name, port)
