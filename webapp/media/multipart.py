"""S3 multipart uploads that clients send straight to the bucket: create, presigned part URLs,
the parts S3 already holds, complete, abort, and streaming the finished object to a local file.

The MinIO SDK has no public multipart API (its put_object splits a local stream itself), so this
module calls its S3-level methods (`_create_multipart_upload`, `_list_parts`, …) in one place;
presigning sends no request. Vendor errors become storage.StorageError / ObjectMissing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import BinaryIO

import urllib3
from minio.datatypes import Part
from minio.error import S3Error

from . import storage

CHUNK_BYTES = 1024 * 1024
_MISSING = {"NoSuchUpload", "NoSuchKey", "NoSuchBucket"}


@dataclass(frozen=True)
class StoredPart:
    part_number: int
    size_bytes: int
    etag: str


@contextmanager
def _translated(what: str) -> Iterator[None]:
    try:
        yield
    except S3Error as exc:
        if exc.code in _MISSING:
            raise storage.ObjectMissing(f"{what}: {exc.code}") from exc
        raise storage.StorageError(f"{what}: {exc}") from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise storage.StorageError(f"{what}: {exc}") from exc


def create(bucket: str, key: str, *, content_type: str) -> str:
    """Start a multipart upload; its S3 upload id."""
    storage.ensure_buckets()
    with _translated(f"Could not start an upload to {bucket}/{key}"):
        return storage.client()._create_multipart_upload(bucket, key, {"Content-Type": content_type})


def part_url(bucket: str, key: str, *, upload_id: str, part_number: int, expiry_s: int) -> str:
    """A presigned PUT for one part: only this part of this upload, until it expires."""
    return storage.signer().get_presigned_url(
        "PUT",
        bucket,
        key,
        expires=timedelta(seconds=expiry_s),
        extra_query_params={"uploadId": upload_id, "partNumber": str(part_number)},
    )


def parts(bucket: str, key: str, *, upload_id: str) -> list[StoredPart]:
    """The parts S3 holds for the upload, in order (a resumed client sends only the others)."""
    found: list[StoredPart] = []
    marker = None
    with _translated(f"Could not list the parts of {bucket}/{key}"):
        while True:
            result = storage.client()._list_parts(bucket, key, upload_id, part_number_marker=marker)
            found += [StoredPart(p.part_number, p.size, p.etag) for p in result.parts]
            if not result.is_truncated:
                return found
            marker = str(result.next_part_number_marker)


def complete(bucket: str, key: str, *, upload_id: str, stored: list[StoredPart]) -> None:
    with _translated(f"Could not complete the upload of {bucket}/{key}"):
        storage.client()._complete_multipart_upload(
            bucket, key, upload_id, [Part(p.part_number, p.etag) for p in stored]
        )


def abort(bucket: str, key: str, *, upload_id: str) -> None:
    """Idempotent: an upload already aborted or completed is not an error."""
    try:
        with _translated(f"Could not abort the upload of {bucket}/{key}"):
            storage.client()._abort_multipart_upload(bucket, key, upload_id)
    except storage.ObjectMissing:
        pass


def copy_to_file(bucket: str, key: str, out: BinaryIO, *, limit_bytes: int) -> tuple[int, str]:
    """Stream the object into `out` (a chunk at a time, never whole in memory), stopping once it
    holds more than `limit_bytes`; (bytes written, sha256 hex)."""
    digest = hashlib.sha256()
    written = 0
    with _translated(f"Could not read {bucket}/{key}"):
        response = storage.client().get_object(bucket, key)
        try:
            for chunk in response.stream(CHUNK_BYTES):
                digest.update(chunk)
                out.write(chunk)
                written += len(chunk)
                if written > limit_bytes:
                    break
        finally:
            response.close()
            response.release_conn()
    out.flush()
    return written, digest.hexdigest()
