"""`manage.py visage_run`: the whole service on one machine (the README's run command).

Starts what is not configured (Redis unless REDIS_URL is set, an S3 server unless S3_ENDPOINT is
set), migrates, makes the demo user, then runs one moderation worker, one GPU-queue worker and
the web server, restarting a worker that exits (they recycle after N jobs). Ctrl-C stops every
process it started; data stays under VISAGE_DATA_DIR.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from decimal import Decimal
from urllib.parse import urlparse

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from billing import services as billing_services
from webapp.ops import embedded

DEMO_CREDITS = Decimal("500")


class Command(BaseCommand):
    help = "Run Visage on this machine with its embedded defaults."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1:8000")

    def handle(self, *args, addr, **options):
        servers = []
        try:
            if "REDIS_URL" not in os.environ:
                port = urlparse(settings.REDIS_URL).port or 6390
                servers.append(embedded.start_redis(settings.DATA_DIR / "redis", port=port))
                self.stdout.write(f"redis: started on {settings.REDIS_URL}")
            if "S3_ENDPOINT" not in os.environ:
                port = int(settings.S3_ENDPOINT.rsplit(":", 1)[1])
                servers.append(embedded.start_s3(settings.DATA_DIR / "s3", settings.S3_ACCESS_KEY,
                                                 settings.S3_SECRET_KEY, port=port))
                self.stdout.write(f"s3: started on {settings.S3_ENDPOINT}")
            call_command("migrate", interactive=False, verbosity=0)
            self._demo_user()
            self._supervise(addr)
        finally:
            for server in reversed(servers):
                server.stop()
            self.stdout.write("stopped; data kept in " + str(settings.DATA_DIR))

    def _demo_user(self) -> None:
        User = get_user_model()
        password = os.environ.get("VISAGE_DEMO_PASSWORD")
        user = User.objects.filter(username="demo").first()
        if user is None:
            password = password or secrets.token_urlsafe(9)
            user = User.objects.create_user(username="demo", password=password)
            billing_services.account_top_up(user=user, amount=DEMO_CREDITS, actor=None, reason="demo starting credits")
            self.stdout.write(self.style.SUCCESS(f"demo user: demo / {password}  ({DEMO_CREDITS} credits)"))
        elif password:
            user.set_password(password)
            user.save(update_fields=["password"])
            self.stdout.write(self.style.SUCCESS(f"demo user: demo / {password}"))
        else:
            self.stdout.write("demo user: demo (password unchanged; set VISAGE_DEMO_PASSWORD to reset it)")

    def _supervise(self, addr: str) -> None:
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        commands = {
            "moderation-worker": manage + ["visage_worker", "--queues", f"{settings.MODERATION_QUEUE},{settings.WEBHOOK_QUEUE}"],
            "gpu-worker": manage + ["visage_worker", "--queues", ",".join(settings.GPU_QUEUES)],
            # gunicorn, not runserver: threads for concurrent polling, the same server as production.
            "web": [sys.executable, "-m", "gunicorn", "webapp.wsgi:application", "--bind", addr,
                    "--workers", "2", "--threads", "8", "--access-logfile", "-", "--graceful-timeout", "10"],
        }
        # The site's own error pages, never Django's debug pages (settings and tracebacks), unless the
        # operator asks with DEBUG=1; WhiteNoise serves the static files either way.
        os.environ.setdefault("DEBUG", "0")
        processes = {name: subprocess.Popen(cmd) for name, cmd in commands.items()}
        self.stdout.write(self.style.SUCCESS(f"Visage is starting on http://{addr}/  (Ctrl-C stops everything)"))
        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping:
                for name, process in list(processes.items()):
                    if process.poll() is not None and not stopping:
                        if name == "web":
                            self.stderr.write(f"web server exited with {process.returncode}; stopping")
                            stopping = True
                            break
                        self.stdout.write(f"{name} exited ({process.returncode}); restarting")
                        time.sleep(1)
                        processes[name] = subprocess.Popen(commands[name])
                time.sleep(0.5)
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.terminate()
            for process in processes.values():
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
