"""A database made by the previous layout (before webapp/jobs/) migrates forward and keeps its
users, credits, tokens, uploads and jobs, read through today's models.

The dump was made by main at e2462a7: `manage.py migrate`, then a user, a top-up, an API token and
a succeeded job (tests/webapp/data/). It is SQLite so it runs anywhere; the subprocess uses the
same settings module a deployment does.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from django.conf import settings

DUMP = Path(__file__).parent / "data" / "db-before-jobs-package.sql"

READ_BACK = """
import json
from django.contrib.auth import get_user_model
from billing import selectors
from webapp.accounts.models import ApiToken
from webapp.jobs.models import Job, Upload
user = get_user_model().objects.get(username="olduser")
job = Job.objects.select_related("source", "target").get(id="11111111-2222-3333-4444-555555555555")
print(json.dumps({
    "password_ok": user.check_password("old-pass-123"),
    "available": str(selectors.account_balance(user=user).available),
    "tokens": list(ApiToken.objects.filter(owner=user).values_list("name", flat=True)),
    "uploads": Upload.objects.filter(owner=user).count(),
    "job": [job.state, job.mode, str(job.cost), job.face_sources, job.source.width, job.target.media_type],
}))
"""


def manage(*args: str, database: Path, data_dir: Path, stdin: str | None = None) -> str:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "webapp.settings",
        "DATABASE_URL": f"sqlite:///{database}",
        "VISAGE_DATA_DIR": str(data_dir),
    }
    result = subprocess.run(
        [sys.executable, str(settings.BASE_DIR / "manage.py"), *args],
        env=env, input=stdin, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_a_database_from_the_previous_layout_migrates_forward_and_keeps_its_rows(tmp_path):
    database = tmp_path / "old.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.executescript(DUMP.read_text())

    manage("migrate", "--no-input", database=database, data_dir=tmp_path)
    plan = manage("migrate", "--plan", database=database, data_dir=tmp_path)
    assert "No planned migration operations" in plan

    rows = json.loads(manage("shell", database=database, data_dir=tmp_path, stdin=READ_BACK).strip().splitlines()[-1])
    assert rows == {
        "password_ok": True,
        "available": "250.00",
        "tokens": ["old phone"],
        "uploads": 2,
        "job": ["succeeded", "hq", "0.0500", [{"face": 0, "source": 0}], 512, "image/jpeg"],
    }
