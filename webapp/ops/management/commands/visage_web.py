"""`manage.py visage_web`: the web server the image's `web` role runs (deploy/image/entrypoint.sh).

It replaces itself with granian as `webapp.serving.web_server_command` builds it, the same command
`make run` supervises, so the server's options (ASGI, backpressure from VISAGE_WAITS_PER_PROCESS,
respawn, kill timeout, access log) are written once. Options after `--` go to granian as they are.
"""

from __future__ import annotations

import argparse
import os

from django.core.management.base import BaseCommand

from webapp.serving import web_server_command


class Command(BaseCommand):
    help = "Serve the site and API with granian (replaces this process)."
    requires_system_checks = []  # the server's own processes load the app; nothing to check twice

    def add_arguments(self, parser):
        parser.add_argument("--host", default="0.0.0.0")
        parser.add_argument("--port", default="8000")
        parser.add_argument("--workers", type=int, default=2, help="granian worker processes")
        parser.add_argument(
            "granian_options", nargs=argparse.REMAINDER, help="after --: granian's own options"
        )

    def handle(self, *args, host: str, port: str, workers: int, granian_options: list[str], **options):
        extra = granian_options[1:] if granian_options[:1] == ["--"] else granian_options
        command = web_server_command(host, str(port), workers=workers) + extra
        self.stdout.write(" ".join(command))
        self.stdout.flush()
        os.execv(command[0], command)
