"""`manage.py visage_makemessages`: Django's makemessages for Visage's catalogues, then compilemessages
(the .mo files are committed next to the .po, so images and checkouts need no gettext tools), with
the project's choices made once (docs/concepts/languages.md): both domains (templates and Python: django;
the site's scripts: djangojs), every language in locale/, no source locations (smaller diffs), no
obsolete entries, and only Visage's own code scanned: SCANNED, never the venv, data, generated
clients, tests, the engine (no user-facing words) or a built documentation site.

The catalogue test (tests/test_translations.py) runs it into a copy to find words that are not in
the committed catalogue.
"""

from __future__ import annotations

import os

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.core.management.commands import makemessages

# The directories with words to translate, from the repository root.
SCANNED = ["templates", "webapp", "billing", "moderation"]
COMPILE_IGNORED = [".*", "var", "node_modules", "clients", "tests", "docs", "deploy", "swap", "site", "build"]


class ScannedOnly(makemessages.Command):
    """makemessages walks the whole current directory; Visage's catalogues come from SCANNED only."""

    def find_files(self, root):
        found = []
        for folder in SCANNED:
            found += super().find_files(os.path.join(root, folder))
        return found


class Command(BaseCommand):
    help = "Update locale/*/LC_MESSAGES/django.po and djangojs.po from the code and templates."

    def add_arguments(self, parser):
        parser.add_argument("--locale", "-l", action="append", default=[], help="only this language (zh_Hans)")
        parser.add_argument("--no-compile", action="store_true", help="update the .po files only")

    def handle(self, *args, **options):
        common = {
            "no_location": True,
            "no_obsolete": True,
            "verbosity": options["verbosity"],
        }
        locales = {"locale": options["locale"]} if options["locale"] else {"all": True}
        call_command(ScannedOnly(), domain="django", extensions=["html", "txt", "py"], **locales, **common)
        call_command(ScannedOnly(), domain="djangojs", extensions=["js"], **locales, **common)
        if not options["no_compile"]:
            # compilemessages walks the whole tree for locale/ folders: only ours (not the venv's Django).
            call_command("compilemessages", ignore_patterns=COMPILE_IGNORED, verbosity=options["verbosity"],
                         **({"locale": options["locale"]} if options["locale"] else {}))
