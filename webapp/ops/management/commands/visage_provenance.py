"""`manage.py visage_provenance FILE [--json]`: read and validate a file's C2PA Content Credentials.
`manage.py visage_provenance --generate-chain DIR`: write a signing chain for a deployment.

Reading exits 0 when the manifest is present and validates (Trusted or Valid), 1 otherwise.

The generated chain (chain.pem = signer + root, signer.key, root.pem) is what a self-hosted
installation without a commercial C2PA certificate uses: the deploy files mount chain.pem and
signer.key as VISAGE_C2PA_CERT_FILE / VISAGE_C2PA_KEY_FILE (deploy/README.md). Readers outside
the installation trust it only once they add root.pem to their trust list.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from webapp.media import provenance
from webapp.media.validation import sniff_media_type

CHAIN_FILES = ("chain.pem", "signer.key", "root.pem")


class Command(BaseCommand):
    help = "Print and validate the C2PA Content Credentials of an image or MP4 file, or generate a signing chain."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, nargs="?")
        parser.add_argument("--json", action="store_true", help="print the whole active manifest as JSON")
        parser.add_argument(
            "--generate-chain", type=Path, metavar="DIR",
            help="write a new root CA and signer certificate (chain.pem, signer.key, root.pem) into DIR",
        )

    def handle(self, *args, file: Path | None, json: bool = False, generate_chain: Path | None = None, **options):
        if generate_chain is not None:
            self._generate(generate_chain)
            return
        if file is None:
            raise CommandError("give a FILE to read, or --generate-chain DIR")
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

    def _generate(self, directory: Path) -> None:
        existing = [name for name in CHAIN_FILES if (directory / name).exists()]
        if existing:
            raise CommandError(f"{directory} already holds {', '.join(existing)}: not overwriting a signing key")
        directory.mkdir(parents=True, exist_ok=True)
        chain, key_pem, root_pem = provenance.generate_chain(service=settings.SERVICE_NAME, development=False)
        for name, content in zip(CHAIN_FILES, (chain, key_pem, root_pem), strict=True):
            path = directory / name
            path.write_bytes(content)
            path.chmod(0o600)
        self.stdout.write(
            f"wrote {', '.join(CHAIN_FILES)} to {directory}\n"
            f"  VISAGE_C2PA_CERT_FILE={directory / 'chain.pem'}\n"
            f"  VISAGE_C2PA_KEY_FILE={directory / 'signer.key'}\n"
            f"readers outside this installation trust the results once they add {directory / 'root.pem'}"
        )


def _dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)
