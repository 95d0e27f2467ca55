"""Many processes starting at once on a fresh store (a scale-out: workers and web pods together)
all find the buckets missing and all try to make them: the ones that lose the race start anyway."""

from __future__ import annotations

from django.conf import settings

from webapp.media import storage


def test_a_bucket_another_process_made_after_our_look_is_ready(monkeypatch):
    storage.ensure_buckets()  # both buckets exist on the server now
    monkeypatch.setattr(storage, "_buckets_ready", False)
    # This process looked before the other one made them: the server then says they are ours already.
    monkeypatch.setattr(storage.client(), "bucket_exists", lambda bucket: False)
    storage.ensure_buckets()
    assert storage._buckets_ready
    monkeypatch.undo()
    assert all(storage.client().bucket_exists(b) for b in (settings.S3_UPLOADS_BUCKET, settings.S3_RESULTS_BUCKET))

