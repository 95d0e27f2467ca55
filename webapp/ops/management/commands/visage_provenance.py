"""`manage.py visage_provenance FILE [--json]`: read and validate a file's C2PA Content Credentials.

Exit status 0 when the manifest is present and validates (Trusted or Valid), 1 otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from webapp.media import provenance
from webapp.media.validation import sniff_media_type


class Command(BaseCommand):
    help = "Print and validate the C2PA Content Credentials of an image or MP4 file."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--json", action="store_true", help="print the whole active manifest as JSON")

    def handle(self, *args, file: Path, json: bool = False, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        media_type = sniff_media_type(file.read_bytes()[:64])
        if not media_type:
            raise CommandError(f"{file}: not a JPEG, PNG, WebP or MP4 file")
        report = provenance.read(file, media_type=media_type)
        if json:
            self.stdout.write(_dumps({**report.summary(), "manifest": report.manifest}))
        elif not report.manifest_present:
            self.stdout.write(f"{file}: no C2PA manifest")
        else:
            self.stdout.write(f"{file}: {report.validation_state}")
            self.stdout.write(f"  signer: {report.signer} (issuer {report.issuer}, {report.alg})")
            for label, data in report.assertions.items():
                self.stdout.write(f"  {label}: {_dumps(data)}")
            for ingredient in report.ingredients:
                self.stdout.write(f"  ingredient: {ingredient.get('title')} ({ingredient.get('relationship')})")
            for code in report.failures:
                self.stdout.write(f"  FAILURE: {code}")
        if not report.manifest_present or report.validation_state == provenance.STATE_INVALID:
            raise SystemExit(1)


def _dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)
