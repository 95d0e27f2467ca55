"""The S3 model cache: model files in a bucket/prefix, each with its SHA-256 beside it.

`s3://bucket/prefix/<file>` holds a model file and `<file>.sha256` its checksum ("<hex>  <file>"),
written together by `push` (`python -m swap models install FILE --to s3://…`, `models sync`).
`pull` copies models into a local directory (the init container of a GPU pod fills its node-local
volume with the hot set; a worker fetches a cold model on first use): the file is written to a
temp file beside the target and renamed only after its SHA-256 matched the manifest's, or, where
the manifest has none, the checksum object's. A corrupt or replaced object is refused and nothing
is written.

S3 is reached with the settings the rest of Visage uses, from the environment (no Django here):
S3_ENDPOINT (host:port), S3_SECURE, S3_REGION, S3_ACCESS_KEY / S3_SECRET_KEY or their *_FILE.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import urllib3
from minio import Minio
from minio.error import S3Error

from swap.models.registry import ModelSpec, sha256_of

logger = logging.getLogger(__name__)

CACHE_ENV = "VISAGE_MODELS_S3"  # s3://bucket/prefix the worker fetches cold models from
CHUNK_BYTES = 1 << 20
CHECKSUM_SUFFIX = ".sha256"

# Called with (model name, seconds, bytes) after each fetch: the worker turns it into a metric.
FetchObserver = Callable[[str, float, int], None]
_observers: list[FetchObserver] = []


class ModelCacheError(Exception):
    """One-line reason: the object is missing, corrupt, or S3 failed."""


@dataclass(frozen=True)
class Location:
    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> Location:
        if not url.startswith("s3://") or not url[5:].split("/", 1)[0]:
            raise ModelCacheError(f"{url!r} is not an s3://bucket[/prefix] URL")
        bucket, _, prefix = url[5:].partition("/")
        return cls(bucket, prefix.strip("/"))

    def key(self, file: str) -> str:
        return f"{self.prefix}/{file}" if self.prefix else file

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"


def add_observer(observer: FetchObserver) -> None:
    if observer not in _observers:
        _observers.append(observer)


def _env(name: str) -> str:
    path = os.environ.get(f"{name}_FILE")
    if path:
        return Path(path).read_text().strip()
    return os.environ.get(name, "")


def client_from_env() -> Minio:
    endpoint = os.environ.get("S3_ENDPOINT")
    if not endpoint:
        raise ModelCacheError("S3_ENDPOINT is not set: no S3 to reach the model cache at")
    http = urllib3.PoolManager(
        timeout=urllib3.Timeout(connect=10, read=60),
        retries=urllib3.Retry(total=3, backoff_factor=0.5, status_forcelist=[500, 502, 503, 504]),
    )
    return Minio(
        endpoint,
        access_key=_env("S3_ACCESS_KEY"),
        secret_key=_env("S3_SECRET_KEY"),
        secure=os.environ.get("S3_SECURE", "0").strip().lower() in ("1", "true", "yes", "on"),
        region=os.environ.get("S3_REGION") or "us-east-1",
        http_client=http,
    )


def push(spec: ModelSpec, source: Path, location: Location, client: Minio) -> str:
    """Upload `source` as `spec`'s file, then its checksum; returns the SHA-256. The file must
    match the manifest's checksum when the manifest has one."""
    digest = sha256_of(source)
    if spec.verified and digest != spec.sha256:
        raise ModelCacheError(f"{spec.name}: {source} has SHA-256 {digest}, the manifest says {spec.sha256}")
    try:
        if not client.bucket_exists(location.bucket):
            client.make_bucket(location.bucket)
        client.fput_object(location.bucket, location.key(spec.file), str(source))
        body = f"{digest}  {spec.file}\n".encode()
        client.put_object(
            location.bucket, location.key(spec.file) + CHECKSUM_SUFFIX, io.BytesIO(body), len(body)
        )
    except (S3Error, urllib3.exceptions.HTTPError) as exc:
        raise ModelCacheError(f"{spec.name}: upload to {location} failed: {exc}") from None
    return digest


def _expected_sha256(spec: ModelSpec, location: Location, client: Minio) -> str:
    if spec.verified:
        return spec.sha256
    key = location.key(spec.file) + CHECKSUM_SUFFIX
    try:
        response = client.get_object(location.bucket, key)
        try:
            text = response.read().decode("ascii", "replace")
        finally:
            response.close()
            response.release_conn()
    except S3Error as exc:
        raise ModelCacheError(
            f"{spec.name}: no checksum for it in the manifest nor at s3://{location.bucket}/{key} ({exc.code}): refused"
        ) from None
    digest = text.split()[0].lower() if text.split() else ""
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ModelCacheError(f"{spec.name}: s3://{location.bucket}/{key} holds no SHA-256: refused")
    return digest


def pull(spec: ModelSpec, location: Location, models_dir: Path, client: Minio) -> bool:
    """Copy `spec`'s file into `models_dir` after checking its SHA-256; False when a file with the
    right checksum is there already. Raises ModelCacheError for a missing or corrupt object."""
    expected = _expected_sha256(spec, location, client)
    target = Path(models_dir) / spec.file
    if target.is_file() and sha256_of(target) == expected:
        return False
    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    url = f"s3://{location.bucket}/{location.key(spec.file)}"
    started = time.perf_counter()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.file}.", suffix=".part", dir=models_dir)
    tmp = Path(tmp_name)
    size = 0
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as handle:
            try:
                response = client.get_object(location.bucket, location.key(spec.file))
            except S3Error as exc:
                raise ModelCacheError(f"{spec.name}: {url} cannot be read ({exc.code})") from None
            try:
                for chunk in response.stream(CHUNK_BYTES):
                    digest.update(chunk)
                    handle.write(chunk)
                    size += len(chunk)
            finally:
                response.close()
                response.release_conn()
            handle.flush()
            os.fsync(handle.fileno())
        if digest.hexdigest() != expected:
            raise ModelCacheError(
                f"{spec.name}: {url} is corrupt: SHA-256 {digest.hexdigest()}, expected {expected}; refused, nothing written"
            )
        os.replace(tmp, target)
    except urllib3.exceptions.HTTPError as exc:
        raise ModelCacheError(f"{spec.name}: reading {url} failed: {exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    seconds = time.perf_counter() - started
    logger.info(
        "model %s fetched from %s in %.2f s (%d bytes, SHA-256 verified)", spec.name, url, seconds, size
    )
    for observer in list(_observers):
        try:
            observer(spec.name, seconds, size)
        except Exception:  # an observer must never fail a fetch
            logger.exception("model fetch observer failed")
    return True


def sync_tree(root: Path, location: Location, client: Minio) -> tuple[int, int]:
    """Make `location` hold exactly the files under `root` (a Triton model repository for NVIDIA's
    Triton to read as `s3://…`); returns (uploaded, removed). Each model's version files go up
    before its `config.pbtxt`, so a Triton polling the repository never loads a half-copied model;
    keys under the prefix that `root` no longer has (an uninstalled version) are removed last."""
    root = Path(root)
    files = sorted(p for p in root.rglob("*") if p.is_file())
    files.sort(key=lambda p: p.name == "config.pbtxt")  # stable: configs after every version file
    wanted = {location.key(p.relative_to(root).as_posix()) for p in files}
    try:
        if not client.bucket_exists(location.bucket):
            client.make_bucket(location.bucket)
        for path in files:
            client.fput_object(location.bucket, location.key(path.relative_to(root).as_posix()), str(path))
        prefix = f"{location.prefix}/" if location.prefix else ""
        stale = [
            obj.object_name
            for obj in client.list_objects(location.bucket, prefix=prefix, recursive=True)
            if obj.object_name not in wanted
        ]
        for key in stale:
            client.remove_object(location.bucket, key)
    except (S3Error, urllib3.exceptions.HTTPError) as exc:
        raise ModelCacheError(f"the repository upload to {location} failed: {exc}") from None
    return len(files), len(stale)


def with_requirements(names: Iterable[str], models: dict[str, ModelSpec]) -> list[str]:
    """`names` and the models each one's adapter loads with it, in order, once each."""
    ordered: list[str] = []
    for name in names:
        if name not in models:
            raise ModelCacheError(f"unknown model {name!r}; known: {', '.join(sorted(models))}")
        for needed in (name, *models[name].requires):
            if needed not in ordered:
                ordered.append(needed)
    return ordered


def fetch_cold(spec: ModelSpec, models_dir: Path) -> bool:
    """A worker's first use of a model not on the node: fetch it from VISAGE_MODELS_S3, if set.
    False when no cache is configured."""
    url = os.environ.get(CACHE_ENV)
    if not url:
        return False
    return pull(spec, Location.parse(url), Path(models_dir), client_from_env()) or True
