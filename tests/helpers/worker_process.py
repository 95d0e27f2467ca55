"""A real `visage_worker` in its own process, on the test database."""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings
from django.db import connection

from webapp.ops.embedded import die_with_parent


def database_url_for_subprocess() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    return f"postgres://{user}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def start_worker(*, queues: str = "vip,default,batch", burst: bool = False, **extra_env) -> subprocess.Popen:
    """`manage.py visage_worker --queues QUEUES` in its own session (so a test can signal its group),
    ended with the test run however that ends: a run stopped mid-test (its `finally` never reached)
    left its worker running for as long as the machine ran."""
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="webapp.settings",
        DATABASE_URL=database_url_for_subprocess(),
        **extra_env,
    )
    return subprocess.Popen(
        [
            sys.executable,
            str(settings.BASE_DIR / "manage.py"),
            "visage_worker",
            "--queues",
            queues,
            *(["--burst"] if burst else []),
        ],
        env=env,
        start_new_session=True,
        preexec_fn=die_with_parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
