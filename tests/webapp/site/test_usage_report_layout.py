"""The admin's usage report: its Total row lines up with the columns above it."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from billing import services
from tests.billing.conftest import usage_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_total_row_lines_up_with_the_columns(
    browser, live_server, funded_user, django_user_model, artifacts
):
    quote = services.quote_job(
        user=funded_user, width=1920, height=1080, frames=300, mode="standard", resolution="1080p"
    )
    job_id = uuid.uuid4()
    services.hold_place(user=funded_user, job_id=job_id, quote=quote)
    services.hold_capture(job_id=job_id, usage=usage_for(quote, gpu_seconds="36"))
    django_user_model.objects.create_superuser(username="root", password="root-pass-123", email="r@x.org")
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "root-pass-123")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}{reverse('admin:billing_usage_report')}")
    page.screenshot(path=str(artifacts / "usage-report-1366.png"))
    cells = page.evaluate(
        """() => {
            const boxes = row => [...row.children].map(c => ({x: c.getBoundingClientRect().left,
                font: getComputedStyle(c).fontSize, pad: getComputedStyle(c).paddingLeft}));
            const rows = [...document.querySelectorAll("#content table tr")];
            return {row: boxes(rows[1]), total: boxes(document.querySelector("tr.usage-total"))};
        }"""
    )
    context.close()
    row, total = cells["row"], cells["total"]
    assert len(row) == len(total) + 2  # the label spans month, user id and username
    for above, below in zip(row[3:], total[1:], strict=True):
        assert abs(above["x"] - below["x"]) <= 1 and above["font"] == below["font"], (above, below)
        assert above["pad"] == below["pad"], (above, below)  # so the figures start at the same x
