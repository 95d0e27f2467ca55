"""deploy/prometheus: the rules load, every alert's unit tests pass, and every alert is tested,
documented in the runbook and names only metrics the code exports."""

from __future__ import annotations

import re
import subprocess

import yaml

from tests.deploy.conftest import DEPLOY
from tests.deploy.exported import exported_series, metric_names_in, triton_series

RULES = DEPLOY / "prometheus"


def alerts() -> list[dict]:
    groups = yaml.safe_load((RULES / "alerts.yml").read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def recording_rules() -> list[dict]:
    groups = yaml.safe_load((RULES / "recording-rules.yml").read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def test_promtool_check_rules(promtool):
    result = subprocess.run(
        [promtool, "check", "rules", "alerts.yml", "recording-rules.yml"],
        cwd=RULES,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_check_config(promtool, tmp_path):
    """prometheus.yml as deployed: the rule files load and the scrape jobs parse (the bearer key's
    file, a compose secret, is pointed at a stand-in)."""
    for name in ("alerts.yml", "recording-rules.yml"):
        (tmp_path / name).write_text((RULES / name).read_text())
    (tmp_path / "metrics-key").write_text("key\n")
    config = (RULES / "prometheus.yml").read_text().replace("/run/secrets/metrics-key", str(tmp_path / "metrics-key"))
    assert "/run/secrets" not in config
    (tmp_path / "prometheus.yml").write_text(config)
    result = subprocess.run(
        [promtool, "check", "config", "prometheus.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_test_rules(promtool):
    result = subprocess.run(
        [promtool, "test", "rules", "alerts_test.yml"], cwd=RULES, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_test_rules_catches_a_broken_threshold(promtool, tmp_path):
    """The unit tests can fail: loosen one threshold and they must."""
    for name in ("recording-rules.yml", "alerts_test.yml"):
        (tmp_path / name).write_text((RULES / name).read_text())
    broken = (
        (RULES / "alerts.yml")
        .read_text()
        .replace('{queue=~"vip|default|batch"}) > 100', '{queue=~"vip|default|batch"}) > 1000')
    )
    assert broken != (RULES / "alerts.yml").read_text()
    (tmp_path / "alerts.yml").write_text(broken)
    result = subprocess.run(
        [promtool, "test", "rules", "alerts_test.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0 and "VisageGpuBacklogHigh" in result.stdout + result.stderr


def test_every_alert_has_severity_summary_runbook_and_unit_tests():
    runbook = (DEPLOY / "RUNBOOK.md").read_text()
    tested = (RULES / "alerts_test.yml").read_text()
    for rule in alerts():
        name = rule["alert"]
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}, name
        assert rule["annotations"]["summary"], name
        assert f"## {name}\n" in runbook, f"{name} has no runbook section"
        assert rule["annotations"]["runbook_url"].endswith("#" + name.lower()), name
        fires = re.search(rf"alertname: {name}\n\s+exp_alerts:\n\s+- exp_labels", tested)
        silent = re.search(rf"alertname: {name}\n\s+exp_alerts: \[\]", tested)
        assert fires and silent, f"{name} needs a test where it fires and one where it stays silent"


def test_rules_name_only_metrics_the_code_exports(db):
    exported = exported_series() | triton_series() | {"up"}
    recorded = {rule["record"] for rule in recording_rules()}
    for rule in [*alerts(), *recording_rules()]:
        unknown = metric_names_in(rule["expr"]) - exported - recorded
        assert not unknown, f"{rule.get('alert') or rule.get('record')}: {unknown}"
