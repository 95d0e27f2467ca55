"""`manage.py visage_examples`: make the landing page's before/after examples with the engine
(webapp.jobs.examples). Run once per installation: `make run` does it on first start, the
`migrate` role of the images after the migrations. Makes nothing when the stored examples come
from the same inputs (`--force` makes them again)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from swap.errors import EngineError
from webapp.jobs import examples
from webapp.media.storage import StorageError


class Command(BaseCommand):
    help = "Make the landing page's before/after examples with the engine (once per installation)."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="make them again even if they are stored")

    def handle(self, *args, force, **options):
        started = time.monotonic()
        try:
            if not force and examples.current():
                self.stdout.write("landing examples: already made from these photos")
                return
            manifest = examples.make()
        except (EngineError, StorageError) as exc:
            # The landing page leaves the section out without them; the deploy goes on, said loudly.
            self.stderr.write(self.style.WARNING(f"landing examples: not made ({type(exc).__name__}: {exc})"))
            return
        made = ", ".join(f"{e['slug']} ({e['mode']}, {e['seconds']} s)" for e in manifest["examples"])
        self.stdout.write(f"landing examples: made {made} in {time.monotonic() - started:.1f} s")
