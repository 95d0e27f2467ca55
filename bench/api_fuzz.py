"""Schemathesis over the OpenAPI schema, against the app in this process. Prints its summary.

Not part of `make test`: schemathesis is not a project dependency (its own pytest, hypothesis and
requests would shadow the venv's). Install it beside the venv, then run:

    .venv/bin/python -m pip install --target /tmp/st-pkgs "schemathesis==4.32.5"
    .venv/bin/python bench/api_fuzz.py [--max-examples 10] [--seed 1]

The app runs with the test settings (embedded Redis and S3, a fresh SQLite database in a temp
folder) behind wsgiref on a free port, with one funded user whose token the run sends. Every check
runs except positive_data_acceptance (random bytes are never a photo with a face) and the token
revocation is left out (it would revoke the token the run uses). Throttles stay on: 429s are
documented answers. Measured 2026-11-30 on the loaded 2-core machine, seed 1, 10 examples:
491 cases over 12 operations, 0 failures, 271 s.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from decimal import Decimal
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

ROOT = Path(__file__).resolve().parent.parent


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", default="10")
    parser.add_argument("--seed", default="1")
    parser.add_argument("--schemathesis-path", default="/tmp/st-pkgs")
    args = parser.parse_args()

    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    os.environ.setdefault("VISAGE_DATA_DIR", tempfile.mkdtemp(prefix="visage-fuzz-"))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    from billing import services as billing_services
    from webapp.accounts import services as account_services

    call_command("migrate", verbosity=0)
    # A user of its own each run: DATABASE_URL may be a database kept between runs (CI's PostgreSQL).
    user = get_user_model().objects.create_user(f"fuzz-{uuid.uuid4().hex[:12]}", password="fuzz-pass-123-xyz")
    billing_services.account_top_up(user=user, amount=Decimal("1000"), actor=None, reason="fuzz run")
    _, key = account_services.api_token_create(user=user, name="fuzz")

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = make_server("127.0.0.1", port, get_wsgi_application(), server_class=_Server, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"{base}/api/schema/?format=json", "--url", base,
        "-H", f"Authorization: Bearer {key}", "--checks", "all", "--exclude-checks", "positive_data_acceptance",
        "--exclude-operation-id", "auth_token_revoke", "--seed", args.seed, "--max-examples", args.max_examples,
        "--phases", "examples,coverage,fuzzing", "-w", "1",
    ]
    return subprocess.call(command, env={**os.environ, "PYTHONPATH": args.schemathesis_path})


if __name__ == "__main__":
    sys.exit(main())
