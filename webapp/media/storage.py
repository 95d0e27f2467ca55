"""S3 object storage (MinIO SDK): private buckets, presigned GETs, our own exceptions.

One lazily created client per process, with explicit timeouts and retries.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from minio import Minio
from minio.deleteobjects import DeleteObject
from minio.error import S3Error

_client: Minio | None = None
_client_lock = threading.Lock()
_signers: dict[str, Minio] = {}  # by S3_PUBLIC_URL
_buckets_ready = False


class StorageError(Exception):
    """S3 is unreachable or failed: a transient fault worth retrying."""


class ObjectMissing(StorageError):
    """The object is not there (deleted, expired): not worth retrying."""


def retry_policy(retries: int) -> urllib3.Retry:
    """The only retries of an S3 request (the MinIO SDK adds none when given this client): a refused
    connection or a 5xx answer is tried again `retries` times; a request S3 took but does not
    answer (a frozen server: the read times out) is not, so one request waits at most
    connect + read timeout per try and a frozen S3 fails a submit in seconds, not minutes."""
    return urllib3.Retry(
        total=retries, connect=retries, read=0, status=retries, other=0,
        backoff_factor=0.3, status_forcelist=[500, 502, 503, 504],
    )


def _connect(*, connect_s: float, read_s: float, retries: int) -> Minio:
    http = urllib3.PoolManager(
        timeout=urllib3.Timeout(connect=connect_s, read=read_s),
        retries=retry_policy(retries),
        maxsize=16,
    )
    return Minio(
        settings.S3_ENDPOINT,
        access_key=settings.S3_ACCESS_KEY,
        secret_key=settings.S3_SECRET_KEY,
        secure=settings.S3_SECURE,
        region=settings.S3_REGION,
        http_client=http,
    )


def client() -> Minio:
    """The process's client. Short timeouts and few retries: a frozen S3 fails a request in
    seconds (503 to the user; RQ retries a worker's task) instead of hanging it for minutes."""
    global _client
    with _client_lock:
        if _client is None:
            _client = _connect(
                connect_s=settings.S3_CONNECT_TIMEOUT_S, read_s=settings.S3_READ_TIMEOUT_S, retries=settings.S3_RETRIES
            )
        return _client


def signer() -> Minio:
    """The client that presigns URLs for clients: for S3_PUBLIC_URL when it is set (the host is
    signed, so a URL must name the address clients use), else the process's client. Presigning
    sends no request: the region is given."""
    public_url = settings.S3_PUBLIC_URL
    if not public_url:
        return client()
    with _client_lock:
        if public_url not in _signers:
            url = urlsplit(public_url)
            _signers[public_url] = Minio(
                url.netloc, access_key=settings.S3_ACCESS_KEY, secret_key=settings.S3_SECRET_KEY,
                secure=url.scheme == "https", region=settings.S3_REGION,
            )
        return _signers[public_url]


def probe(timeout_s: float = 2.0) -> None:
    """Really ask S3 now (nothing cached, no retry, a short timeout): raises StorageError when down."""
    try:
        _connect(connect_s=timeout_s, read_s=timeout_s, retries=0).bucket_exists(settings.S3_RESULTS_BUCKET)
    except (S3Error, urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"S3 storage at {settings.S3_ENDPOINT} is unavailable: {exc}") from exc


def ensure_buckets() -> None:
    """Create the private buckets once per process (idempotent)."""
    global _buckets_ready
    if _buckets_ready:
        return
    try:
        for bucket in (settings.S3_UPLOADS_BUCKET, settings.S3_RESULTS_BUCKET):
            if not client().bucket_exists(bucket):
                _make_bucket(bucket)
    except (S3Error, urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"S3 storage at {settings.S3_ENDPOINT} is unavailable: {exc}") from exc
    _buckets_ready = True


def _make_bucket(bucket: str) -> None:
    try:
        client().make_bucket(bucket)
    except S3Error as exc:
        # Another process made it after our look: many workers starting at once on a fresh store
        # (a scale-out) all find it missing, and all but one are told it is already theirs.
        if exc.code != "BucketAlreadyOwnedByYou":
            raise


def put_bytes(bucket: str, key: str, data: bytes, content_type: str) -> None:
    ensure_buckets()
    try:
        client().put_object(bucket, key, io.BytesIO(data), len(data), content_type=content_type)
    except (S3Error, urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"Could not store {bucket}/{key}: {exc}") from exc


def get_bytes(bucket: str, key: str) -> bytes:
    try:
        response = client().get_object(bucket, key)
    except S3Error as exc:
        if exc.code in {"NoSuchKey", "NoSuchBucket"}:
            raise ObjectMissing(f"{bucket}/{key} does not exist") from exc
        raise StorageError(f"Could not read {bucket}/{key}: {exc}") from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"Could not read {bucket}/{key}: {exc}") from exc
    try:
        return response.read()
    finally:
        response.close()
        response.release_conn()


def delete(bucket: str, key: str) -> None:
    """Idempotent: deleting a missing object is not an error."""
    if not key:
        return
    try:
        client().remove_object(bucket, key)
    except S3Error as exc:
        if exc.code not in {"NoSuchKey", "NoSuchBucket"}:
            raise StorageError(f"Could not delete {bucket}/{key}: {exc}") from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"Could not delete {bucket}/{key}: {exc}") from exc


def delete_many(bucket: str, keys: Iterable[str]) -> None:
    """`delete` for several objects in one request (S3 DeleteObjects, 1,000 keys a request)."""
    keys = sorted({key for key in keys if key})
    if len(keys) == 1:
        delete(bucket, keys[0])
    if len(keys) < 2:
        return
    try:
        errors = list(client().remove_objects(bucket, [DeleteObject(key) for key in keys]))
    except S3Error as exc:
        if exc.code == "NoSuchBucket":
            return
        raise StorageError(f"Could not delete {len(keys)} objects from {bucket}: {exc}") from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"Could not delete {len(keys)} objects from {bucket}: {exc}") from exc
    errors = [error for error in errors if error.code not in {"NoSuchKey", "NoSuchBucket"}]
    if errors:
        raise StorageError(
            f"Could not delete {bucket}/{errors[0].name} and {len(errors) - 1} more: {errors[0].code} {errors[0].message}"
        )


def exists(bucket: str, key: str) -> bool:
    try:
        client().stat_object(bucket, key)
        return True
    except S3Error as exc:
        if exc.code in {"NoSuchKey", "NoSuchBucket", "NotFound"}:
            return False
        raise StorageError(f"Could not check {bucket}/{key}: {exc}") from exc


def presigned_get(
    bucket: str, key: str, *, expiry_s: int | None = None, download_name: str | None = None, content_type: str = ""
) -> str:
    """A time-limited GET; `content_type` makes the storage serve it as that (an upload's sniffed
    type, whatever the uploader declared when it was stored)."""
    expires = timedelta(seconds=expiry_s or settings.S3_PRESIGN_EXPIRY_S)
    headers = {"response-content-disposition": f'attachment; filename="{download_name}"'} if download_name else {}
    if content_type:
        headers["response-content-type"] = content_type
    return signer().presigned_get_object(bucket, key, expires=expires, response_headers=headers or None)


def list_keys(bucket: str, prefix: str = "") -> list[str]:
    return [obj.object_name for obj in client().list_objects(bucket, prefix=prefix, recursive=True)]


def list_stored_before(bucket: str, before: datetime) -> list[str]:
    """Keys of the objects stored (last modified) before `before`. Raises StorageError."""
    try:
        return [
            obj.object_name
            for obj in client().list_objects(bucket, recursive=True)
            if obj.last_modified is not None and obj.last_modified < before
        ]
    except (S3Error, urllib3.exceptions.HTTPError, OSError) as exc:
        raise StorageError(f"Could not list {bucket}: {exc}") from exc
