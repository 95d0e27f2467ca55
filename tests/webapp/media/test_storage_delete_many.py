"""Deleting several objects in one S3 request (DeleteObjects), against the real S3 server: what is
there goes, what is already gone is no error, and nothing else is touched."""

from __future__ import annotations

import pytest
from django.conf import settings

from webapp.media import storage

BUCKET = settings.S3_UPLOADS_BUCKET


def test_delete_many_deletes_what_is_there_in_one_request(monkeypatch):
    keys = [f"delete-many/{name}" for name in ("a.jpg", "b.png", "c.npz")]
    for key in [*keys, "delete-many/kept.jpg"]:
        storage.put_bytes(BUCKET, key, b"x", "application/octet-stream")
    single_deletes = []
    monkeypatch.setattr(storage.client(), "remove_object", lambda *args: single_deletes.append(args))

    storage.delete_many(BUCKET, [*keys, "delete-many/never-stored.jpg", ""])

    assert single_deletes == []
    assert storage.list_keys(BUCKET, prefix="delete-many/") == ["delete-many/kept.jpg"]
    storage.delete_many(BUCKET, keys)  # again: idempotent
    storage.delete_many(BUCKET, [])


def test_delete_many_of_one_key_is_a_plain_delete():
    storage.put_bytes(BUCKET, "delete-many/one.jpg", b"x", "image/jpeg")
    storage.delete_many(BUCKET, ["delete-many/one.jpg"])
    assert not storage.exists(BUCKET, "delete-many/one.jpg")


def test_delete_many_on_a_storage_that_refuses_says_so(monkeypatch):
    monkeypatch.setattr(storage, "client", lambda: storage.Minio("127.0.0.1:9", secure=False, access_key="a", secret_key="b"))
    with pytest.raises(storage.StorageError, match="Could not delete 2 objects"):
        storage.delete_many(BUCKET, ["a", "b"])
