"""Alerts reach people: the web's real /metrics scraped by Debian's `prometheus` with the shipped
alert rules (the backlog alert's `for` shortened: the test profile), firing alerts sent to Debian's
`prometheus-alertmanager` running deploy/alertmanager/alertmanager.yml (only the addresses and
secrets filled in, and its waits shortened), which delivers to a stand-in WeCom API and webhook."""

from __future__ import annotations

import os
import sys

import django_rq
import pytest
import requests
import yaml

from tests.deploy.conftest import DEPLOY, prometheus_binary
from tests.helpers.processes import alive, start, stop
from tests.helpers.waiting import wait_until
from tests.helpers.wecom import WeComStandIn
from tests.helpers.worker_process import database_url_for_subprocess
from webapp.ops.embedded import free_port

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "alerting-test-key"
BACKLOG = "VisageGpuBacklogHigh"
BACKLOG_THRESHOLD = 100  # alerts.yml: sum(visage_queue_depth{queue=~"vip|default|batch"}) > 100


def write_test_rules_profile(tmp_path) -> None:
    """alerts.yml and recording-rules.yml as shipped, the backlog alert firing after 1 s."""
    groups = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())
    rules = [rule for group in groups["groups"] for rule in group["rules"] if rule.get("alert") == BACKLOG]
    assert len(rules) == 1 and f"> {BACKLOG_THRESHOLD}" in rules[0]["expr"]
    rules[0]["for"] = "1s"
    (tmp_path / "alerts.yml").write_text(yaml.safe_dump(groups))
    (tmp_path / "recording-rules.yml").write_text((DEPLOY / "prometheus" / "recording-rules.yml").read_text())


def alertmanager_config(tmp_path, wecom: WeComStandIn, stand_in_url: str) -> None:
    config = yaml.safe_load((DEPLOY / "alertmanager" / "alertmanager.yml").read_text())
    config["global"].update(
        wechat_api_url=f"{stand_in_url}/cgi-bin/",
        wechat_api_corp_id=wecom.corp_id,
        wechat_api_secret=wecom.corp_secret,
        smtp_smarthost=f"127.0.0.1:{free_port()}",  # nobody answers: email is not what this test reads
        smtp_require_tls=False,
    )
    config["route"].update(group_wait="0s", group_interval="1s")
    for receiver in config["receivers"]:
        for webhook in receiver.get("webhook_configs", []):
            webhook["url"] = f"{stand_in_url}/hooks/{receiver['name']}"
        for wechat in receiver.get("wechat_configs", []):
            wechat["agent_id"] = "1000002"
            wechat["to_party"] = "7" if receiver["name"] == "team-chat" else "3"
    (tmp_path / "alertmanager.yml").write_text(yaml.safe_dump(config, allow_unicode=True))


def test_the_backlog_alert_reaches_wecom_and_the_webhook(tmp_path):
    prometheus = prometheus_binary("prometheus")
    alertmanager = prometheus_binary("prometheus-alertmanager")
    wecom = WeComStandIn(corp_id="ww-test-corp", corp_secret="test-app-secret")
    server = wecom.serve()
    stand_in_url = f"http://127.0.0.1:{server.server_address[1]}"
    web_port, prom_port, am_port = free_port(), free_port(), free_port()
    write_test_rules_profile(tmp_path)
    alertmanager_config(tmp_path, wecom, stand_in_url)
    (tmp_path / "prometheus.yml").write_text(f"""
global: {{scrape_interval: 1s, evaluation_interval: 1s}}
rule_files: [recording-rules.yml, alerts.yml]
alerting:
  alertmanagers: [{{static_configs: [{{targets: ["127.0.0.1:{am_port}"]}}]}}]
scrape_configs:
  - job_name: visage-web
    authorization: {{credentials: {KEY}}}
    static_configs: [{{targets: ["127.0.0.1:{web_port}"]}}]
""")
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="webapp.settings",
        DATABASE_URL=database_url_for_subprocess(),
        PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
        VISAGE_METRICS_KEY=KEY,
    )
    log_path = tmp_path / "stack.log"
    log = log_path.open("wb")
    processes = [
        start(
            [
                sys.executable,
                "-m",
                "granian",
                "--interface",
                "wsgi",
                "webapp.wsgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(web_port),
                "--workers",
                "1",
            ],
            env,
            log,
        ),
        start(
            [
                alertmanager,
                f"--config.file={tmp_path / 'alertmanager.yml'}",
                f"--storage.path={tmp_path / 'am'}",
                f"--web.listen-address=127.0.0.1:{am_port}",
                "--cluster.listen-address=",
            ],
            env,
            log,
        ),
        start(
            [
                prometheus,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            env,
            log,
        ),
    ]
    batch = django_rq.get_queue("batch")
    try:
        # GPU work piles up with no worker to take it: one task over the alert's threshold.
        for _ in range(BACKLOG_THRESHOLD + 1):
            batch.enqueue("builtins.print")

        def backlog_message() -> dict | None:
            alive(processes, log_path)
            return next((m for m in wecom.messages if BACKLOG in m["text"]["content"]), None)

        message = wait_until(
            backlog_message, timeout_s=180, what=f"{BACKLOG} delivered to the stand-in WeCom"
        )
        wait_until(lambda: wecom.webhooks.get("/hooks/team-chat"), timeout_s=60, what="the webhook receiver")
        alerts_api = requests.get(f"http://127.0.0.1:{am_port}/api/v2/alerts", timeout=10).json()
    finally:
        batch.empty()
        for process in reversed(processes):
            stop(process)
        log.close()
        server.shutdown()

    # Alertmanager fetched a token with the corp id and app secret, then sent as the configured app
    # to the warning route's department (team-chat), a text naming the alert and its runbook.
    assert {"corpid": "ww-test-corp", "corpsecret": "test-app-secret"} in wecom.token_requests
    assert message["msgtype"] == "text" and message["agentid"] == "1000002" and message["toparty"] == "7"
    content = message["text"]["content"]
    assert f"{BACKLOG} (warning)" in content and "FIRING" in content
    assert "Runbook: deploy/RUNBOOK.md#visagegpubackloghigh" in content
    assert f"{BACKLOG_THRESHOLD + 1} GPU tasks waiting" in content  # the summary, with the scraped value
    hook = wecom.webhooks["/hooks/team-chat"][0]
    assert hook["receiver"] == "team-chat" and hook["status"] == "firing"
    assert BACKLOG in {a["labels"]["alertname"] for a in hook["alerts"]}
    assert "/hooks/oncall-page" not in wecom.webhooks or all(
        BACKLOG not in {a["labels"]["alertname"] for a in h["alerts"]}
        for h in wecom.webhooks["/hooks/oncall-page"]
    )
    assert any(a["labels"]["alertname"] == BACKLOG for a in alerts_api)
