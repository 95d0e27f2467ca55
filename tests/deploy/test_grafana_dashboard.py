"""deploy/grafana: the dashboard is valid JSON, every panel's PromQL parses (promtool) and names
only metrics the code exports, and provisioning points at the data source the panels use."""

from __future__ import annotations

import json
import subprocess

import yaml

from tests.deploy.conftest import DEPLOY
from tests.deploy.exported import exported_series, metric_names_in, triton_series

GRAFANA = DEPLOY / "grafana"


def dashboard() -> dict:
    return json.loads((GRAFANA / "dashboards" / "visage.json").read_text())


def panel_queries() -> list[tuple[str, str]]:
    return [
        (panel["title"], target["expr"])
        for panel in dashboard()["panels"]
        for target in panel.get("targets", [])
    ]


def test_the_dashboard_covers_what_on_call_needs():
    titles = " | ".join(panel["title"] for panel in dashboard()["panels"]).lower()
    for topic in (
        "request rate",
        "latency",
        "job p50",
        "queue depth",
        "queue wait",
        "stage",
        "inference",
        "gpu utilisation",
        "gpu memory",
        "moderation",
        "credits captured",
        "triton queue time",
        "triton batch fill",
        "triton failures",
    ):
        assert topic in titles, topic
    ids = [panel["id"] for panel in dashboard()["panels"]]
    assert len(ids) == len(set(ids))


def test_every_panel_query_parses(promtool, tmp_path):
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"dashboard:panel_{i}", "expr": expr}
                    for i, (_, expr) in enumerate(panel_queries())
                ],
            }
        ]
    }
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump(rules))
    result = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_broken_query_would_be_caught(promtool, tmp_path):
    path = tmp_path / "bad.yml"
    path.write_text(
        yaml.safe_dump(
            {
                "groups": [
                    {
                        "name": "x",
                        "rules": [{"record": "x:y", "expr": "sum by (le (rate(visage_jobs_total[5m]))"}],
                    }
                ]
            }
        )
    )
    assert (
        subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, timeout=120).returncode
        != 0
    )


def test_panels_name_only_exported_metrics(db):
    exported = exported_series() | triton_series()
    for title, expr in panel_queries():
        names = metric_names_in(expr)
        assert names, title
        assert names <= exported, f"{title}: {names - exported}"


def test_provisioning_uses_the_panels_data_source():
    uids = {
        target["datasource"]["uid"] for panel in dashboard()["panels"] for target in panel.get("targets", [])
    }
    datasources = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text())
    assert uids == {source["uid"] for source in datasources["datasources"]}
    providers = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "visage.yml").read_text())
    assert providers["providers"][0]["type"] == "file"
