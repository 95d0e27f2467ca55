"""A database made by the previous layout (before webapp/jobs/) migrates forward and keeps its
users, credits, tokens, uploads and jobs, read through today's models.

The dump was made by main at e2462a7: `manage.py migrate`, then a user, a top-up, an API token and
a succeeded job (tests/webapp/data/). The first test migrates that SQLite file itself, with the
settings module a deployment uses. The second writes the dump's rows into the test database
(SQLite, or PostgreSQL under DATABASE_URL) migrated back to that commit's schema, then migrates
it forward: the same rows, on the database the suite runs on.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, models
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

DUMP = Path(__file__).parent / "data" / "db-before-jobs-package.sql"

READ_BACK = """
import json
from datetime import UTC
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
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
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

    rows = json.loads(
        manage("shell", database=database, data_dir=tmp_path, stdin=READ_BACK).strip().splitlines()[-1]
    )
    assert rows == {
        "password_ok": True,
        "available": "250.00",
        "tokens": ["old phone"],
        "uploads": 2,
        "job": ["succeeded", "hq", "0.0500", [{"face": 0, "source": 0}], 512, "image/jpeg"],
    }


# The newest migration of each app at e2462a7 (the dump's django_migrations rows).
PREVIOUS_LAYOUT = [
    ("webapp", "0003_job_face_sources"),
    ("billing", "0002_default_plan_and_calibration"),
    ("moderation", "0003_known_bad_code"),
]
# The dump's user data, parents before children.
USER_TABLES = [
    "auth_user",
    "billing_account",
    "billing_ledgerentry",
    "webapp_apitoken",
    "webapp_upload",
    "webapp_job",
]


def _from_sqlite(field: models.Field, value):
    """A value as SQLite stored it (0/1, hex UUIDs, JSON text, naive UTC times) as the field's Python value."""
    if value is None:
        return None
    if isinstance(field, models.JSONField):
        return json.loads(value)
    value = field.to_python(value)
    if isinstance(field, models.DateTimeField) and timezone.is_naive(value):
        return timezone.make_aware(value, UTC)
    return value


@pytest.mark.django_db(transaction=True)
def test_rows_written_at_the_previous_schema_of_this_database_migrate_forward():
    dump = sqlite3.connect(":memory:")
    dump.executescript(DUMP.read_text())
    executor = MigrationExecutor(connection)
    executor.migrate(PREVIOUS_LAYOUT)
    try:
        old_models = {
            model._meta.db_table: model
            for model in executor.loader.project_state(PREVIOUS_LAYOUT).apps.get_models()
        }
        for table in USER_TABLES:
            model = old_models[table]
            fields = {field.column: field for field in model._meta.concrete_fields}
            cursor = dump.execute(f'SELECT * FROM "{table}"')
            columns = [column for column, *_ in cursor.description]
            rows = [
                model(
                    **{
                        fields[column].attname: _from_sqlite(fields[column], value)
                        for column, value in zip(columns, row, strict=True)
                    }
                )
                for row in cursor
            ]
            assert rows, table
            model.objects.bulk_create(rows)
    finally:
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())  # the suite's other tests need today's schema

    from django.contrib.auth import get_user_model

    from billing import selectors
    from webapp.accounts.models import ApiToken
    from webapp.jobs.models import Job, Upload

    user = get_user_model().objects.get(username="olduser")
    job = Job.objects.select_related("source", "target").get(id="11111111-2222-3333-4444-555555555555")
    # the hash as stored (the test settings' fast hasher cannot check a PBKDF2 hash; the test above does)
    assert user.password == dump.execute("SELECT password FROM auth_user").fetchone()[0]
    assert str(selectors.account_balance(user=user).available) == "250.00"
    assert list(ApiToken.objects.filter(owner=user).values_list("name", flat=True)) == ["old phone"]
    assert Upload.objects.filter(owner=user).count() == 2
    assert [
        job.state,
        job.mode,
        str(job.cost),
        job.face_sources,
        job.source.width,
        job.target.media_type,
    ] == ["succeeded", "hq", "0.0500", [{"face": 0, "source": 0}], 512, "image/jpeg"]
