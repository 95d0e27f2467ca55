"""Signals other apps listen to without moderation importing them (metrics live in webapp)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent once per recorded verdict: stage ("input", "frames", "output"), decision ("allow", "review",
# "reject") and check (the check that decided: "nsfw", "ocr", …; "none" for allow).
screened = Signal()
