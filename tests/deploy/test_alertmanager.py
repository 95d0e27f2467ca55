"""deploy/alertmanager: the configuration Alertmanager loads (amtool), its routes by severity, the
receivers people read (WeCom, email, webhook), and the same routing in compose and Kubernetes."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from tests.deploy.conftest import DEPLOY, prometheus_binary
from tests.helpers.kustomize import by_kind, render

CONFIG = DEPLOY / "alertmanager" / "alertmanager.yml"


@pytest.fixture
def amtool() -> str:
    return prometheus_binary("amtool")


def config() -> dict:
    return yaml.safe_load(CONFIG.read_text())


def alert_severities() -> set[str]:
    groups = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())["groups"]
    return {rule["labels"]["severity"] for group in groups for rule in group["rules"] if "alert" in rule}


def check_config(amtool: str, path) -> subprocess.CompletedProcess:
    return subprocess.run([amtool, "check-config", str(path)], capture_output=True, text=True, timeout=60)


def routed_to(amtool: str, *labels: str) -> str:
    result = subprocess.run(
        [amtool, "config", "routes", "test", f"--config.file={CONFIG}", *labels],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.strip()


def test_amtool_check_config(amtool):
    result = check_config(amtool, CONFIG)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_amtool_refuses_a_route_to_a_receiver_that_does_not_exist(amtool, tmp_path):
    broken = config()
    broken["route"]["routes"][0]["receiver"] = "nobody"
    (tmp_path / "alertmanager.yml").write_text(yaml.safe_dump(broken))
    result = check_config(amtool, tmp_path / "alertmanager.yml")
    assert result.returncode != 0 and "nobody" in result.stdout + result.stderr


def test_alerts_are_routed_by_severity(amtool):
    assert routed_to(amtool, "alertname=VisageNoGpuWorker", "severity=critical") == "oncall-page"
    assert routed_to(amtool, "alertname=VisageGpuBacklogHigh", "severity=warning") == "team-chat"
    assert routed_to(amtool, "alertname=Other", "severity=info") == "team-email"


def test_every_alert_severity_reaches_wecom_and_critical_pages_everywhere():
    receivers = {r["name"]: r for r in config()["receivers"]}
    routes = {route["matchers"][0]: route["receiver"] for route in config()["route"]["routes"]}
    for severity in alert_severities():
        receiver = receivers[routes[f'severity="{severity}"']]
        assert receiver.get("wechat_configs"), severity
    page = receivers[routes['severity="critical"']]
    assert {"wechat_configs", "email_configs", "webhook_configs"} <= set(page)
    for receiver in receivers.values():
        for wechat in receiver.get("wechat_configs", []):
            assert "{{ .Labels.alertname }}" in wechat["message"]
            assert "{{ .Annotations.runbook_url }}" in wechat["message"]
    assert config()["global"]["wechat_api_url"] == "https://qyapi.weixin.qq.com/cgi-bin/"


def test_compose_runs_alertmanager_and_prometheus_sends_to_it():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    service = compose["services"]["alertmanager"]
    assert "--config.file=/run/secrets/alertmanager-config" in service["command"]
    assert service["secrets"] == ["alertmanager-config"]
    assert compose["secrets"]["alertmanager-config"] == {"file": "./secrets/alertmanager.yml"}
    prometheus = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    targets = [
        t
        for am in prometheus["alerting"]["alertmanagers"]
        for c in am["static_configs"]
        for t in c["targets"]
    ]
    assert targets == ["alertmanager:9093"]


def k8s_matchers(matchers: list[dict]) -> list[str]:
    return [f'{m["name"]}{m.get("matchType", "=")}"{m["value"]}"' for m in matchers]


@pytest.mark.parametrize("overlay", ["dev", "prod"])
def test_kubernetes_alertmanager_config_routes_and_receives_as_compose(overlay):
    manifests = render(overlay)
    spec = by_kind(manifests, "AlertmanagerConfig")["visage"]["spec"]
    compose_route = config()["route"]
    assert spec["route"]["receiver"] == compose_route["receiver"]
    assert [(k8s_matchers(r["matchers"]), r["receiver"]) for r in spec["route"]["routes"]] == [
        (r["matchers"], r["receiver"]) for r in compose_route["routes"]
    ]
    kinds = {
        "wechat_configs": "wechatConfigs",
        "email_configs": "emailConfigs",
        "webhook_configs": "webhookConfigs",
    }
    k8s_receivers = {r["name"]: r for r in spec["receivers"]}
    for receiver in config()["receivers"]:
        k8s = k8s_receivers[receiver["name"]]
        assert {kinds[k] for k in receiver if k in kinds} == {k for k in k8s if k != "name"}, receiver["name"]
        for ours, theirs in zip(
            receiver.get("wechat_configs", []), k8s.get("wechatConfigs", []), strict=True
        ):
            assert theirs["message"] == ours["message"]
            assert theirs["apiSecret"] == {"name": "visage-alerting", "key": "wechat-api-secret"}
    if overlay == "dev":  # prod: the Secret is made outside git (deploy/README.md)
        secret = by_kind(manifests, "Secret")["visage-alerting"]
        referenced = {
            ref["key"]
            for r in spec["receivers"]
            for configs in r.values()
            if isinstance(configs, list)
            for c in configs
            for ref in (c.get("apiSecret"), c.get("authPassword"), c.get("urlSecret"))
            if ref
        }
        assert referenced == set(secret["data"])
