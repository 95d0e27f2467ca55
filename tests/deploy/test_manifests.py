"""deploy/k8s: every overlay renders with `kubectl kustomize`, validates against the Kubernetes
schemas (kubernetes-validate, offline), and keeps the invariants an operator relies on."""

from __future__ import annotations

import argparse
from urllib.parse import urlsplit

import django_rq
import pytest
from django.conf import settings

from swap.serve import launcher
from tests.helpers.kustomize import K8S, by_kind, render, render_base_with

OVERLAYS = ["dev", "prod", "prod-triton", "prod-triton-nvidia"]
KUBERNETES_VERSION = "1.34.0"
WORKLOAD_KINDS = {"Deployment", "StatefulSet", "Job", "CronJob"}
# Custom resources: kubernetes-validate has no schemas for them; the tests below check them.
CUSTOM_KINDS = {"ScaledObject", "TriggerAuthentication", "ServiceMonitor", "PodMonitor", "PrometheusRule",
                "AlertmanagerConfig"}
VISAGE_IMAGES = (
    "visage-web", "visage-worker", "visage-gpu-worker", "visage-triton",
    "visage/web", "visage/worker", "visage/gpu-worker", "visage/triton",
)
ON_DEMAND_POOL = "visage-gpu-worker"  # vip, default: on-demand nodes, never scaled to zero
BATCH_POOL = "visage-gpu-batch-worker"  # batch: spot nodes, scaled to zero
GPU_POOLS = (ON_DEMAND_POOL, BATCH_POOL)
BATCH_QUEUE = "batch"
# Spot node labels by provider, and the reclaim notice (seconds) each gives a node.
SPOT_LABELS = {
    "eks.amazonaws.com/capacityType": ("SPOT", 120),
    "karpenter.sh/capacity-type": ("spot", 120),
    "cloud.google.com/gke-spot": ("true", 30),
    "kubernetes.azure.com/scalesetpriority": ("spot", 30),
}
# Spot taints a node pool may carry (AKS always, GKE when configured); EKS sets none by default.
SPOT_TAINTS = {("cloud.google.com/gke-spot", "true"), ("kubernetes.azure.com/scalesetpriority", "spot")}
SPOT_COMPONENTS = {"spot-eks": "eks.amazonaws.com/capacityType", "spot-gke": "cloud.google.com/gke-spot",
                   "spot-aks": "kubernetes.azure.com/scalesetpriority"}


@pytest.fixture(scope="module", params=OVERLAYS)
def manifests(request) -> list[dict]:
    return render(request.param)


def pod_spec(doc: dict) -> dict:
    if doc["kind"] == "CronJob":
        return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return doc["spec"]["template"]["spec"]


def containers(doc: dict) -> list[dict]:
    spec = pod_spec(doc)
    return spec.get("initContainers", []) + spec["containers"]


def workloads(docs: list[dict]) -> list[dict]:
    return [d for d in docs if d["kind"] in WORKLOAD_KINDS]


def is_visage(container: dict) -> bool:
    return any(name in container["image"] for name in VISAGE_IMAGES)


def test_every_resource_validates_against_the_kubernetes_schema(manifests):
    from kubernetes_validate import utils as kv

    checked = set()
    for doc in manifests:
        if doc["kind"] in CUSTOM_KINDS:
            continue
        kv.validate(doc, KUBERNETES_VERSION, strict=True)  # raises ValidationError with the path
        checked.add(doc["kind"])
    assert {"Deployment", "Service", "ConfigMap", "Job", "CronJob", "HorizontalPodAutoscaler",
            "PodDisruptionBudget"} <= checked


def test_a_broken_manifest_is_refused_by_the_validator():
    from kubernetes_validate import utils as kv

    deployment = by_kind(render("prod"), "Deployment")["visage-web"]
    pod_spec(deployment)["containers"][0]["resources"]["requests"]["cpu"] = {"not": "a quantity"}
    with pytest.raises(kv.ValidationError):
        kv.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_every_container_has_resources_and_runs_as_non_root(manifests):
    for doc in workloads(manifests):
        spec = pod_spec(doc)
        for container in containers(doc):
            where = f"{doc['kind']}/{doc['metadata']['name']}/{container['name']}"
            resources = container.get("resources", {})
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(bound, {})), f"{where}: {bound} missing"
            security = container.get("securityContext", {})
            assert security.get("allowPrivilegeEscalation") is False, where
            assert security.get("runAsNonRoot") or spec.get("securityContext", {}).get("runAsNonRoot"), where
            assert spec.get("securityContext", {}).get("runAsUser", 0) != 0, where
            if is_visage(container):
                assert security.get("readOnlyRootFilesystem") is True, where
                assert security.get("capabilities", {}).get("drop") == ["ALL"], where


def test_every_long_running_container_has_probes(manifests):
    for doc in workloads(manifests):
        if doc["kind"] in ("Job", "CronJob"):
            continue  # run to completion
        for container in pod_spec(doc)["containers"]:  # init containers run to completion
            where = f"{doc['kind']}/{doc['metadata']['name']}/{container['name']}"
            assert "readinessProbe" in container and "livenessProbe" in container, where


def test_web_probes_healthz_and_workers_probe_their_own_heartbeat(manifests):
    deployments = by_kind(manifests, "Deployment")
    web = pod_spec(deployments["visage-web"])["containers"][0]
    assert web["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert web["livenessProbe"]["httpGet"]["path"] == "/livez"
    for name in ("visage-cpu-worker", *GPU_POOLS):
        worker = pod_spec(deployments[name])["containers"][0]
        for probe in ("readinessProbe", "livenessProbe"):
            assert worker[probe]["exec"]["command"] == ["python", "manage.py", "visage_worker_probe"]
    scheduler = pod_spec(deployments["visage-scheduler"])["containers"][0]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert scheduler[probe]["exec"]["command"] == ["python", "manage.py", "visage_scheduler_probe"]


def serves_with_triton(manifests) -> bool:
    return "visage-triton" in by_kind(manifests, "Deployment")


def takes_one_gpu_on_gpu_nodes(spec: dict) -> bool:
    resources = spec["containers"][0]["resources"]
    return (
        str(resources["requests"].get("nvidia.com/gpu")) == str(resources["limits"].get("nvidia.com/gpu")) == "1"
        and spec.get("nodeSelector", {}).get("nvidia.com/gpu.present") == "true"
        and any(t["key"] == "nvidia.com/gpu" for t in spec.get("tolerations", []))
    )


def test_each_gpu_goes_to_the_process_that_runs_the_models(manifests):
    """Local inference: each GPU worker pod takes one GPU. With Triton, Triton's pods take them and
    the GPU-queue workers are CPU-side clients that request none."""
    deployments = by_kind(manifests, "Deployment")
    gpu_worker = pod_spec(deployments[ON_DEMAND_POOL])
    batch_worker = pod_spec(deployments[BATCH_POOL])
    if serves_with_triton(manifests):
        assert takes_one_gpu_on_gpu_nodes(pod_spec(deployments["visage-triton"]))
        for spec in (gpu_worker, batch_worker):
            assert "nvidia.com/gpu" not in spec["containers"][0]["resources"]["limits"]
            assert "nodeSelector" not in spec
            assert all(t["key"] != "nvidia.com/gpu" for t in spec.get("tolerations", []))
        assert "tolerations" not in gpu_worker
    else:
        assert takes_one_gpu_on_gpu_nodes(gpu_worker) and takes_one_gpu_on_gpu_nodes(batch_worker)
    cpu_spec = pod_spec(deployments["visage-cpu-worker"])
    assert "nvidia.com/gpu" not in cpu_spec["containers"][0]["resources"]["limits"]


def test_triton_serves_the_models_the_workers_are_pointed_at():
    """The Triton component: the workers' VISAGE_TRITON_URL names the Triton Service's gRPC port,
    which reaches the container port the `triton` role listens on; Triton reads the workers'
    model volume, is probed on its catalog (bound last) and scraped on its metrics port."""
    manifests = render("prod-triton")
    config = by_kind(manifests, "ConfigMap")["visage-config"]["data"]
    assert config["VISAGE_INFERENCE"] == "triton"
    url = urlsplit(config["VISAGE_TRITON_URL"])
    assert url.scheme == "grpc"
    service = by_kind(manifests, "Service")[url.hostname]
    port = next(p for p in service["spec"]["ports"] if p["port"] == url.port)
    deployment = by_kind(manifests, "Deployment")["visage-triton"]
    assert service["spec"]["selector"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    triton = pod_spec(deployment)["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in triton["ports"]}
    # the serve command's own defaults are the ports the image's `triton` role listens on
    defaults = {"http": 8000, "grpc": 8001, "metrics": 8002}
    parser = argparse.ArgumentParser()
    launcher.add_subparser(parser.add_subparsers())
    served = parser.parse_args(["serve"])
    assert (served.http_port, served.grpc_port, served.metrics_port) == tuple(defaults.values())
    assert port["name"] == port["targetPort"] == "grpc"
    assert ports == defaults and ports["grpc"] == url.port
    assert triton["args"] == ["triton"]
    assert triton["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"

    triton_spec = pod_spec(deployment)
    mount = next(m for m in triton["volumeMounts"] if m["mountPath"] == "/models")
    volume = next(v for v in triton_spec["volumes"] if v["name"] == mount["name"])
    assert volume["persistentVolumeClaim"]["claimName"] in by_kind(manifests, "PersistentVolumeClaim")
    for pool in GPU_POOLS:  # Triton holds the models: its clients pull none
        assert "initContainers" not in pod_spec(by_kind(manifests, "Deployment")[pool])
    monitor = by_kind(manifests, "PodMonitor")["visage-triton"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
    assert gpu_queues_served(manifests) == list(settings.GPU_QUEUES)


def gpu_queues_served(manifests) -> list[str]:
    deployments = by_kind(manifests, "Deployment")
    return [q for pool in GPU_POOLS for q in queues_of(deployments[pool])]


def queues_of(deployment: dict) -> list[str]:
    args = pod_spec(deployment)["containers"][0]["args"]
    return args[args.index("--queues") + 1].split(",")


def test_workers_listen_to_the_queues_the_code_uses(manifests):
    deployments = by_kind(manifests, "Deployment")
    # every GPU queue in exactly one pool, in the workers' priority order
    assert gpu_queues_served(manifests) == list(settings.GPU_QUEUES)
    assert queues_of(deployments[BATCH_POOL]) == [BATCH_QUEUE]
    assert set(queues_of(deployments["visage-cpu-worker"])) == {settings.MODERATION_QUEUE, settings.WEBHOOK_QUEUE}


def rq_key(queue: str) -> str:
    """The Redis list the app's own RQ queue object pushes job ids onto."""
    return django_rq.get_queue(queue).key


def test_keda_triggers_name_the_real_rq_queue_keys(manifests):
    """listName must be the Redis list RQ pushes onto, computed here by RQ from the code's queue names."""
    scaled = by_kind(manifests, "ScaledObject")
    deployments = by_kind(manifests, "Deployment")
    assert set(scaled) == {*GPU_POOLS, "visage-cpu-worker"}
    for name, scaled_object in scaled.items():
        assert scaled_object["spec"]["scaleTargetRef"]["name"] in deployments
        expected = {rq_key(queue) for queue in queues_of(deployments[name])}
        triggers = scaled_object["spec"]["triggers"]
        assert {t["type"] for t in triggers} == {"redis"}
        assert {t["metadata"]["listName"] for t in triggers} == expected
        for trigger in triggers:
            assert int(trigger["metadata"]["listLength"]) > 0
            auth = trigger["authenticationRef"]["name"]
            assert auth in by_kind(manifests, "TriggerAuthentication")
        spec = scaled_object["spec"]
        assert 0 <= spec["minReplicaCount"] <= spec["maxReplicaCount"] and spec["cooldownPeriod"] > 0
    assert {rq_key(q) for q in settings.GPU_QUEUES} == {"rq:queue:vip", "rq:queue:default", "rq:queue:batch"}


def test_keda_reads_the_redis_database_the_app_uses(manifests):
    from redis.connection import parse_url

    secrets = by_kind(manifests, "Secret")
    if "visage-secrets" not in secrets:
        pytest.skip("this overlay expects the Secret to be made outside git")
    import base64

    data = {k: base64.b64decode(v).decode() for k, v in secrets["visage-secrets"]["data"].items()}
    database = str(parse_url(data["redis-url"]).get("db", 0))
    host = parse_url(data["redis-url"])["host"]
    assert data["redis-address"].split(":")[0] == host
    for scaled_object in by_kind(manifests, "ScaledObject").values():
        assert {t["metadata"]["databaseIndex"] for t in scaled_object["spec"]["triggers"]} == {database}


def test_drain_timeout_fits_in_the_grace_period(manifests):
    for name in ("visage-cpu-worker", ON_DEMAND_POOL):
        deployment = by_kind(manifests, "Deployment")[name]
        assert drain_timeout_s(manifests, deployment) + 30 <= pod_spec(deployment)["terminationGracePeriodSeconds"], name


def drain_timeout_s(manifests, deployment: dict) -> int:
    """The worker's VISAGE_WORKER_DRAIN_TIMEOUT_S: its container's own env, else the ConfigMap's."""
    env = {e["name"]: e["value"] for e in pod_spec(deployment)["containers"][0].get("env", []) if "value" in e}
    config = by_kind(manifests, "ConfigMap")["visage-config"]["data"]
    return int(env.get("VISAGE_WORKER_DRAIN_TIMEOUT_S", config["VISAGE_WORKER_DRAIN_TIMEOUT_S"]))


def test_the_batch_pool_scales_to_zero_and_the_on_demand_pool_never_does(manifests):
    scaled = by_kind(manifests, "ScaledObject")
    assert scaled[BATCH_POOL]["spec"]["minReplicaCount"] == 0
    assert scaled[BATCH_POOL]["spec"]["cooldownPeriod"] > 0
    assert scaled[ON_DEMAND_POOL]["spec"]["minReplicaCount"] >= 1
    # the batch pool scales on the batch backlog alone, and no on-demand trigger reads it
    assert {t["metadata"]["listName"] for t in scaled[BATCH_POOL]["spec"]["triggers"]} == {rq_key(BATCH_QUEUE)}
    assert rq_key(BATCH_QUEUE) not in {t["metadata"]["listName"] for t in scaled[ON_DEMAND_POOL]["spec"]["triggers"]}
    deployments = by_kind(manifests, "Deployment")
    assert deployments[ON_DEMAND_POOL]["spec"]["replicas"] >= 1


def spot_terms(spec: dict) -> tuple[set, set]:
    """(the spot labels the pod prefers, the spot labels it requires) as (key, value) pairs."""
    affinity = spec.get("affinity", {}).get("nodeAffinity", {})
    preferred = {
        (e["key"], v)
        for term in affinity.get("preferredDuringSchedulingIgnoredDuringExecution", [])
        for e in term["preference"]["matchExpressions"] if e["operator"] == "In" for v in e["values"]
    }
    required = {
        (e["key"], v)
        for term in affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", [])
        for e in term["matchExpressions"] if e["operator"] == "In" for v in e["values"]
    }
    spot = {(key, value) for key, (value, _) in SPOT_LABELS.items()}
    return preferred & spot, required & spot


def assert_batch_pool_on_spot_within_the_notice(manifests) -> set:
    deployments = by_kind(manifests, "Deployment")
    batch = pod_spec(deployments[BATCH_POOL])
    preferred, required = spot_terms(batch)
    assert preferred or required, "the batch pool neither prefers nor requires spot nodes"
    tolerated = {(t["key"], t.get("value")) for t in batch.get("tolerations", []) if t.get("effect") == "NoSchedule"}
    assert SPOT_TAINTS <= tolerated
    # the shortest notice among the nodes it may land on bounds the whole stop
    notice_s = min(SPOT_LABELS[key][1] for key, _ in (required or preferred))
    grace_s = batch["terminationGracePeriodSeconds"]
    assert drain_timeout_s(manifests, deployments[BATCH_POOL]) + 20 <= grace_s <= notice_s
    # the on-demand pool stays off spot nodes: it neither tolerates their taints nor prefers them
    on_demand = pod_spec(deployments[ON_DEMAND_POOL])
    assert spot_terms(on_demand) == (set(), set())
    assert not SPOT_TAINTS & {(t["key"], t.get("value")) for t in on_demand.get("tolerations", [])}
    return required


def test_the_batch_pool_runs_on_spot_nodes_and_stops_within_their_notice(manifests):
    assert_batch_pool_on_spot_within_the_notice(manifests)


def test_the_prod_overlay_requires_its_providers_spot_nodes_for_the_batch_pool():
    for overlay in ("prod", "prod-triton"):
        assert assert_batch_pool_on_spot_within_the_notice(render(overlay)) == {("eks.amazonaws.com/capacityType", "SPOT")}


@pytest.mark.parametrize("component", sorted(SPOT_COMPONENTS))
def test_each_spot_component_requires_its_providers_spot_label(component, tmp_path):
    manifests = render_base_with(component, tmp_path)
    label = SPOT_COMPONENTS[component]
    assert assert_batch_pool_on_spot_within_the_notice(manifests) == {(label, SPOT_LABELS[label][0])}
    from kubernetes_validate import utils as kv

    kv.validate(by_kind(manifests, "Deployment")[BATCH_POOL], KUBERNETES_VERSION, strict=True)


def test_secrets_are_files_and_never_in_the_config_map(manifests):
    config = by_kind(manifests, "ConfigMap")["visage-config"]["data"]
    for name in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL", "S3_ACCESS_KEY", "S3_SECRET_KEY"):
        assert name not in config
        assert config[f"{name}_FILE"].startswith("/run/secrets/visage/")
    for doc in workloads(manifests):
        for container in containers(doc):
            if is_visage(container) and doc["metadata"]["name"] != "visage-triton":  # Triton reads no secret
                mounts = {m["mountPath"] for m in container["volumeMounts"]}
                assert "/run/secrets/visage" in mounts and "/data" in mounts


def test_web_has_an_hpa_and_a_disruption_budget(manifests):
    hpa = by_kind(manifests, "HorizontalPodAutoscaler")["visage-web"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == "visage-web"
    assert hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    pdb = by_kind(manifests, "PodDisruptionBudget")["visage-web"]
    labels = by_kind(manifests, "Deployment")["visage-web"]["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_migrations_job_and_retention_cronjob_run_the_real_commands(manifests):
    migrate = pod_spec(by_kind(manifests, "Job")["visage-migrate"])["containers"][0]
    assert migrate["args"] == ["migrate"]
    purge = pod_spec(by_kind(manifests, "CronJob")["visage-purge-results"])["containers"][0]
    assert purge["args"][-1] == "visage_purge_results"
    from django.core.management import get_commands

    assert {"visage_purge_results", "visage_worker_probe", "visage_scheduler", "visage_scheduler_probe"} <= set(
        get_commands()
    )
    scheduler = by_kind(manifests, "Deployment")["visage-scheduler"]
    assert scheduler["spec"]["replicas"] == 1
    assert pod_spec(scheduler)["containers"][0]["args"] == ["python", "manage.py", "visage_scheduler"]


def test_prometheus_rule_is_generated_from_the_rule_files(manifests):
    import importlib.util

    spec = importlib.util.spec_from_file_location("sync_rules", K8S / "sync_rules.py")
    sync_rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sync_rules)
    assert (K8S / "base" / "prometheusrule.yaml").read_text() == sync_rules.render(), (
        "deploy/k8s/base/prometheusrule.yaml is stale: run python3 deploy/k8s/sync_rules.py"
    )
    rule = by_kind(manifests, "PrometheusRule")["visage"]
    assert rule["spec"]["groups"] == sync_rules.rule_groups() and rule["spec"]["groups"]
    monitor = by_kind(manifests, "ServiceMonitor")["visage-web"]
    web_service = by_kind(manifests, "Service")["visage-web"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= web_service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"][0]["port"] in {p["name"] for p in web_service["spec"]["ports"]}


def test_prometheus_scrapes_the_web_and_every_worker_with_the_metrics_key(manifests):
    config = by_kind(manifests, "ConfigMap")["visage-config"]["data"]
    assert config["VISAGE_METRICS_KEY_FILE"] == "/run/secrets/visage/metrics-key"
    port = int(config["VISAGE_WORKER_METRICS_PORT"])
    pod_monitor = by_kind(manifests, "PodMonitor")["visage-workers"]
    selector = pod_monitor["spec"]["selector"]
    allowed = next(e["values"] for e in selector["matchExpressions"] if e["key"] == "app.kubernetes.io/component")
    scraped = set()
    for name, deployment in by_kind(manifests, "Deployment").items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        if all(labels.get(k) == v for k, v in selector["matchLabels"].items()) and labels.get(
            "app.kubernetes.io/component"
        ) in allowed:
            ports = {p["name"]: p["containerPort"] for p in pod_spec(deployment)["containers"][0].get("ports", [])}
            assert ports.get("metrics") == port, name
            scraped.add(name)
    assert scraped == {"visage-cpu-worker", *GPU_POOLS}
    endpoints = pod_monitor["spec"]["podMetricsEndpoints"] + by_kind(manifests, "ServiceMonitor")["visage-web"]["spec"]["endpoints"]
    for endpoint in endpoints:
        assert endpoint["authorization"]["credentials"] == {"name": "visage-secrets", "key": "metrics-key"}
    secrets = by_kind(manifests, "Secret")
    if "visage-secrets" in secrets:  # dev makes it; prod's is made by hand (deploy/README.md)
        assert "metrics-key" in secrets["visage-secrets"]["data"]


def test_result_urls_are_signed_for_an_address_clients_reach(manifests):
    """S3_ENDPOINT is a name inside the cluster; results are signed for S3_PUBLIC_URL (the S3
    ingress in prod, a port-forward in dev), which the settings accept only as http(s)://host[:port]."""
    import re

    config = by_kind(manifests, "ConfigMap")["visage-config"]["data"]
    assert re.fullmatch(r"https?://[^/?#]+", config["S3_PUBLIC_URL"])
    assert config["S3_PUBLIC_URL"].split("://")[1] != config["S3_ENDPOINT"]


def test_gpu_pods_start_with_the_hot_models_pulled_from_the_s3_model_cache(manifests):
    """Local inference: an init container of each GPU pool runs the real `python -m swap models pull`
    (parsed here by the swap CLI's own parser) from VISAGE_MODELS_S3 into the node-local volume the
    worker reads as VISAGE_MODELS_DIR (writable: cold models are fetched into it)."""
    if serves_with_triton(manifests):
        pytest.skip("Triton holds the models (the Triton test checks its volume)")
    from swap.cli import build_parser
    from swap.models import registry, s3cache

    config = by_kind(manifests, "ConfigMap")["visage-config"]["data"]
    s3cache.Location.parse(config["VISAGE_MODELS_S3"])
    hot = config["VISAGE_MODELS_HOT"].split(",")
    assert hot and set(hot) <= set(registry.MODELS)
    for pool in GPU_POOLS:
        spec = pod_spec(by_kind(manifests, "Deployment")[pool])
        (init,) = spec["initContainers"]
        assert init["args"][:3] == ["python", "-m", "swap"]
        args = build_parser().parse_args(init["args"][3:])
        assert args.models_action == "pull"
        assert (args.source, args.hot) == ("$(VISAGE_MODELS_S3)", "$(VISAGE_MODELS_HOT)")
        assert {"configMapRef": {"name": "visage-config"}} in init["envFrom"]
        worker = spec["containers"][0]
        assert {"configMapRef": {"name": "visage-config"}} in worker["envFrom"]

        def volume_at(container, path, spec=spec):
            mount = next(m for m in container["volumeMounts"] if m["mountPath"] == path)
            return mount, next(v for v in spec["volumes"] if v["name"] == mount["name"])

        init_mount, init_volume = volume_at(init, str(args.target))
        worker_mount, worker_volume = volume_at(worker, config["VISAGE_MODELS_DIR"])
        assert init_volume is worker_volume and "emptyDir" in worker_volume  # node-local, per pod
        assert not init_mount.get("readOnly") and not worker_mount.get("readOnly")


def test_nvidias_triton_reads_the_repository_the_job_uploads_and_polls_it():
    """components/triton-nvidia: NVIDIA's image (not Visage's) runs `tritonserver` on the S3
    repository that the visage-triton-repository Job writes with the real models CLI (parsed by its
    own parser), both naming the same bucket and prefix; poll mode, so an upload needs no restart;
    the S3 keys come from Visage's Secret; the workers are pointed at its gRPC port."""
    from swap.cli import build_parser

    manifests = render("prod-triton-nvidia")
    config = by_kind(manifests, "ConfigMap")["visage-config"]["data"]
    deployment = by_kind(manifests, "Deployment")["visage-triton"]
    triton = pod_spec(deployment)["containers"][0]
    assert triton["image"].startswith("nvcr.io/nvidia/tritonserver:") and triton["command"] == ["tritonserver"]
    flags = dict(arg.split("=", 1) for arg in triton["args"])
    assert flags["--model-repository"] == "$(TRITON_MODEL_REPOSITORY)"
    assert flags["--model-control-mode"] == "poll"
    assert int(flags["--grpc-port"]) == urlsplit(config["VISAGE_TRITON_URL"]).port
    assert int(flags["--exit-timeout-secs"]) < pod_spec(deployment)["terminationGracePeriodSeconds"]
    ours = urlsplit(config["VISAGE_TRITON_REPOSITORY_S3"])  # s3://bucket/prefix on S3_ENDPOINT
    theirs = urlsplit(config["TRITON_MODEL_REPOSITORY"].removeprefix("s3://"))  # s3://https://host:port/…
    assert theirs.scheme == ("https" if config["S3_SECURE"] == "1" else "http")
    assert theirs.netloc == config["S3_ENDPOINT"]
    assert theirs.path == f"/{ours.netloc}{ours.path}"
    env = {e["name"]: e["valueFrom"] for e in triton["env"] if "valueFrom" in e}
    assert env["AWS_ACCESS_KEY_ID"]["secretKeyRef"] == {"name": "visage-secrets", "key": "s3-access-key"}
    assert env["AWS_SECRET_ACCESS_KEY"]["secretKeyRef"] == {"name": "visage-secrets", "key": "s3-secret-key"}
    assert "visage-models" not in by_kind(manifests, "PersistentVolumeClaim")

    job = pod_spec(by_kind(manifests, "Job")["visage-triton-repository"])
    (pull,) = job["initContainers"]
    pulled = build_parser().parse_args(pull["args"][3:])
    written = build_parser().parse_args(job["containers"][0]["args"][3:])
    assert pulled.models_action == "pull" and written.models_action == "repository"
    assert str(pulled.target) == str(written.models_dir) and written.to == "$(VISAGE_TRITON_REPOSITORY_S3)"


def test_only_visages_own_pods_may_call_triton(manifests):
    """Triton checks nothing itself: with no policy any pod in the cluster could swap faces past
    moderation, billing and the mark. Its metrics port stays open (Prometheus)."""
    if not serves_with_triton(manifests):
        pytest.skip("this overlay runs the models in the workers")
    policy = by_kind(manifests, "NetworkPolicy")["visage-triton"]
    triton_labels = by_kind(manifests, "Deployment")["visage-triton"]["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= triton_labels.items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    callers, metrics = policy["spec"]["ingress"]
    allowed = callers["from"][0]["podSelector"]["matchExpressions"][0]["values"]
    components = {
        d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        for d in by_kind(manifests, "Deployment").values() if d["metadata"]["name"] != "visage-triton"
    }
    assert set(allowed) <= components and {"gpu-worker", "web"} <= set(allowed)
    assert {p["port"] for p in callers["ports"]} == {"grpc", "http"} and metrics == {"ports": [{"port": "metrics"}]}
