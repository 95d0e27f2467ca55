"""Test settings: start the embedded Redis and S3 servers on free ports unless REDIS_URL / S3_ENDPOINT
are configured, export their addresses (so worker subprocesses see them), then load the real settings.

pytest-django imports this module once, before any test is collected.
"""

from __future__ import annotations

import atexit
import os
import tempfile
from pathlib import Path

from tests.helpers.face_models import link_mediapipe_models
from webapp.ops import embedded

_data_dir = Path(tempfile.mkdtemp(prefix="visage-test-"))
os.environ.setdefault("VISAGE_DATA_DIR", str(_data_dir))
# prometheus-client multiprocess mode, as `visage_run` runs it: set before prometheus_client is
# imported; worker subprocesses started by tests inherit it and write beside this process.
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(_data_dir / "metrics")
(_data_dir / "metrics").mkdir()
os.environ.setdefault("VISAGE_MODELS_DIR", str(_data_dir / "models"))
# The default engine's models as `make` installed them (MediaPipe's detector and mesh), when present.
link_mediapipe_models(Path(os.environ["VISAGE_MODELS_DIR"]))
# Worker subprocesses start without measuring their speed (a few real swaps, slow on a busy CPU);
# tests/webapp/jobs/test_billing_e2e.py runs that measurement itself.
os.environ.setdefault("VISAGE_WARMUP_CALIBRATION", "0")

if not os.environ.get("REDIS_URL"):
    _redis = embedded.start_redis(_data_dir / "redis", persist=False)
    atexit.register(_redis.stop)
    os.environ["REDIS_URL"] = _redis.url

if not os.environ.get("S3_ENDPOINT"):
    os.environ.setdefault("S3_ACCESS_KEY", "visage-test")
    os.environ.setdefault("S3_SECRET_KEY", "visage-test-secret")
    _s3 = embedded.start_s3(_data_dir / "s3", os.environ["S3_ACCESS_KEY"], os.environ["S3_SECRET_KEY"])
    atexit.register(_s3.stop)
    os.environ["S3_ENDPOINT"] = _s3.url

from webapp.settings import *  # noqa: E402, F403 - the project's settings, once the servers above set the environment

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast user creation in tests

# Worker subprocesses in tests must see the test database: keep SQLite's test DB in a file.
# On PostgreSQL, one test database per run, so parallel runs on one server don't collide.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405 - from the project's settings
    DATABASES["default"]["TEST"] = {"NAME": str(_data_dir / "test.sqlite3")}  # noqa: F405 - from the project's settings
else:
    DATABASES["default"]["TEST"] = {"NAME": f"test_visage_{os.getpid()}"}  # noqa: F405 - from the project's settings
