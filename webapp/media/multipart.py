"""S3 multipart uploads that clients send straight to the bucket: create, presigned part URLs,
the parts S3 already holds, complete, abort, and streaming the finished object to a local file.

The MinIO SDK has no public multipart API (its put_object splits a local stream itself), so this
module calls its S3-level methods (`_create_multipart_upload`, `_list_parts`, …) in one place;
presigning sends no request. Vendor errors become storage.StorageError / ObjectMissing.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import BinaryIO
from urllib.parse import SplitResult, parse_qsl, quote, urlsplit, urlunsplit

import urllib3
from django.conf import settings
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


def part_url(bucket: str, key: str, *, upload_id: str, part_number: int, size_bytes: int, expiry_s: int) -> str:
    """A presigned PUT for one part of exactly `size_bytes`: only this part of this upload, until it
    expires. Its Content-Length is a signed header, so S3 refuses a body of any other size (with
    only the host signed, a part URL of a 10-byte upload stored 30 MiB, kept until the upload
    expired: a day of storage for anyone). The MinIO SDK signs the host only: the URL it makes
    (its host and path, as clients reach them) is signed again here with both."""
    unsigned = urlsplit(
        storage.signer().get_presigned_url(
            "PUT", bucket, key, expires=timedelta(seconds=expiry_s),
            extra_query_params={"uploadId": upload_id, "partNumber": str(part_number)},
        )
    )
    params = [(name, value) for name, value in parse_qsl(unsigned.query) if not name.startswith("X-Amz-")]
    return _presigned(unsigned, params, {"content-length": str(size_bytes), "host": unsigned.netloc}, expiry_s)


def _presigned(url: SplitResult, params: list[tuple[str, str]], headers: dict[str, str], expiry_s: int) -> str:
    """`url` presigned by AWS Signature Version 4 in its query string, with `headers` signed
    (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html)."""
    now = datetime.now(UTC)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    scope = f"{day}/{settings.S3_REGION}/s3/aws4_request"
    signed_headers = ";".join(sorted(headers))
    params = [
        *params,
        ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
        ("X-Amz-Credential", f"{settings.S3_ACCESS_KEY}/{scope}"),
        ("X-Amz-Date", amz_date),
        ("X-Amz-Expires", str(expiry_s)),
        ("X-Amz-SignedHeaders", signed_headers),
    ]
    query = "&".join(f"{quote(name, safe='-_.~')}={quote(value, safe='-_.~')}" for name, value in sorted(params))
    canonical_headers = "".join(f"{name}:{headers[name]}\n" for name in sorted(headers))
    canonical = f"PUT\n{url.path}\n{query}\n{canonical_headers}\n{signed_headers}\nUNSIGNED-PAYLOAD"
    to_sign = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = f"AWS4{settings.S3_SECRET_KEY}".encode()
    for part in (day, settings.S3_REGION, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return urlunsplit((url.scheme, url.netloc, url.path, f"{query}&X-Amz-Signature={signature}", ""))


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
