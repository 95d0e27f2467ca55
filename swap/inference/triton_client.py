"""The worker side of VISAGE_INFERENCE=triton: an onnxruntime-like session backed by Triton
(the server is the `python -m swap serve` tool, swap.serve).

`TritonSession` offers what the adapters use of `onnxruntime.InferenceSession`
(`get_inputs()`, `get_outputs()`, `run(outputs, feeds)`), so every adapter keeps its own pre-
and post-processing and produces bit-identical results to local inference on the same model
files. Which version runs comes from the canary router (`swap.models.canary`); what ran is
recorded on the job's routing.

gRPC by default (`grpc://host:8001`); `http://host:8000` works too (bench/triton.py measures both).
A server that cannot be reached, or a model that is not ready, raises `InferenceUnavailable`
(a transient fault: the job is retried, never charged).
"""

from __future__ import annotations

import importlib
import json
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlparse

import numpy as np

from swap.errors import EngineError, InferenceUnavailable, ModelMissing
from swap.models import canary

CATALOG_MODEL = "visage_catalog"
CATALOG_TTL_S = 10.0  # roll-out changes (promote/rollback) reach workers within this
TIMEOUT_S = 60.0
READY_TIMEOUT_S = 2.0  # a health check must answer quickly even when Triton's host is gone


@dataclass(frozen=True)
class NodeArg:
    """onnxruntime.NodeArg's fields: name, shape (symbolic dims as strings), type."""

    name: str
    shape: list
    type: str


def _endpoint(url: str) -> tuple[str, str]:
    """("grpc" | "http", "host:port") from grpc://host:port, http://host:port or host:port."""
    parsed = urlparse(url if "://" in url else f"grpc://{url}")
    protocol = parsed.scheme or "grpc"
    if protocol not in ("grpc", "http"):
        raise ValueError(f"VISAGE_TRITON_URL must start with grpc:// or http://, got {url!r}")
    return protocol, parsed.netloc


class _Connection:
    """tritonclient clients, one per thread (the gRPC/HTTP clients are not shared across threads)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.protocol, self.address = _endpoint(url)
        self._local = threading.local()
        self._catalog: dict | None = None
        self._catalog_at = 0.0
        self._emaps: dict[tuple[str, int], np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def module(self):
        """tritonclient.grpc or tritonclient.http (both re-export tritonclient.utils)."""
        # The one lazy import here: grpc (gevent for HTTP) loads only in workers that use Triton.
        return importlib.import_module(f"tritonclient.{self.protocol}")

    def client(self):
        client = getattr(self._local, "client", None)
        if client is None:
            if self.protocol == "grpc":
                client = self.module.InferenceServerClient(self.address)
            else:
                client = self.module.InferenceServerClient(
                    self.address, connection_timeout=TIMEOUT_S, network_timeout=TIMEOUT_S
                )
            self._local.client = client
        return client

    def infer(self, model: str, version: int | None, arrays: dict[str, np.ndarray], outputs: list[str]):
        module = self.module
        inputs = []
        for name, array in arrays.items():
            tensor = module.InferInput(name, list(array.shape), module.np_to_triton_dtype(array.dtype))
            if array.dtype == np.object_:
                tensor.set_data_from_numpy(array)
            else:
                tensor.set_data_from_numpy(np.ascontiguousarray(array))
            inputs.append(tensor)
        requested = [module.InferRequestedOutput(name) for name in outputs]
        kwargs = {"model_version": str(version) if version else ""}
        if self.protocol == "grpc":
            kwargs["client_timeout"] = TIMEOUT_S
        try:
            result = self.client().infer(model, inputs, outputs=requested, **kwargs)
        except Exception as exc:  # translated into our own errors below
            raise _translate(exc, self.url, model) from exc
        return [result.as_numpy(name) for name in outputs]

    def catalog(self, *, refresh: bool = False) -> dict:
        with self._lock:
            fresh = self._catalog is not None and time.monotonic() - self._catalog_at < CATALOG_TTL_S
            if fresh and not refresh:
                return self._catalog
        (raw, _) = self.infer(
            CATALOG_MODEL, None, {"emap_of": np.array([b""], dtype=np.object_)}, ["catalog", "emap"]
        )
        catalog = json.loads(raw.reshape(-1)[0])
        with self._lock:
            self._catalog, self._catalog_at = catalog, time.monotonic()
        return catalog

    def emap(self, name: str, version: int) -> np.ndarray:
        key = (name, version)
        with self._lock:
            if key in self._emaps:
                return self._emaps[key]
        (_, emap) = self.infer(
            CATALOG_MODEL,
            None,
            {"emap_of": np.array([f"{name}:{version}".encode()], dtype=np.object_)},
            ["catalog", "emap"],
        )
        if emap.shape != (512, 512):
            raise EngineError(
                f"The inference service at {self.url} has no emap for {name} version {version}."
            )
        with self._lock:
            self._emaps[key] = emap
        return emap

    def ready(self) -> bool:
        try:
            if self.protocol == "grpc":
                return bool(self.client().is_server_ready(client_timeout=READY_TIMEOUT_S))
            return bool(self.client().is_server_ready())
        except Exception:  # noqa: BLE001 - any failure means "not ready"
            return False


def _translate(exc: Exception, url: str, model: str) -> EngineError:
    text = str(exc)
    lowered = text.lower()
    unreachable = (
        "unavailable" in lowered
        or "connect" in lowered
        or "deadline" in lowered
        or "timed out" in lowered
        or "not ready" in lowered
        or "unknown model" in lowered
        or isinstance(exc, (ConnectionError, OSError))
    )
    if unreachable:
        return InferenceUnavailable(
            f"The inference service at {url} cannot run {model}: {text.splitlines()[0]}"
        )
    return EngineError(f"Triton failed running {model}: {text.splitlines()[0] if text else exc!r}")


_connections: dict[str, _Connection] = {}
_sessions: dict[tuple[str, str], TritonSession] = {}
_registry_lock = threading.Lock()


def connection(url: str) -> _Connection:
    with _registry_lock:
        conn = _connections.get(url)
        if conn is None:
            conn = _connections[url] = _Connection(url)
        return conn


def served_models(url: str) -> dict[str, dict]:
    """{model: catalog entry} of what the Triton service at `url` serves (InferenceUnavailable if down)."""
    return connection(url).catalog()["models"]


def server_ready(url: str) -> bool:
    return connection(url).ready()


def readiness(url: str) -> dict:
    """For /healthz: is Triton up, which models it serves, which failed to load (by name)."""
    conn = connection(url)
    if not conn.ready():
        return {"ready": False, "url": url, "models": {}, "failed": []}
    try:
        catalog = conn.catalog(refresh=True)
    except EngineError as exc:
        return {"ready": False, "url": url, "models": {}, "failed": [], "error": str(exc)}
    models = {name: {"versions": m["versions"], "stable": m["stable"], "canary": m["canary"]}
              for name, m in catalog["models"].items()}  # fmt: skip
    return {"ready": True, "url": url, "models": models, "failed": catalog.get("failed", [])}


def clear() -> None:
    """Forget connections and sessions (tests; a worker that re-reads its settings)."""
    with _registry_lock:
        _connections.clear()
        _sessions.clear()


def triton_session(name: str, url: str) -> TritonSession:
    key = (url, name)
    with _registry_lock:
        session = _sessions.get(key)
    if session is None:
        session = TritonSession(name, url)
        with _registry_lock:
            session = _sessions.setdefault(key, session)
    return session


class TritonSession:
    """`name` served by Triton at `url`, looking like an onnxruntime session to the adapters."""

    def __init__(self, name: str, url: str) -> None:
        self.name = name
        self.url = url
        self.connection = connection(url)
        entry = self._entry()
        meta = entry["metadata"]
        self.triton_name = entry["triton_name"]
        self._served_names = entry["triton_models"]
        self._inputs = [NodeArg(i["name"], i["shape"], i["type"]) for i in meta["inputs"]]
        self._outputs = [NodeArg(o["name"], o["shape"], o["type"]) for o in meta["outputs"]]
        self._batching = {i["name"]: i["batching"] for i in meta["inputs"]}
        self.max_batch_size = max(1, int(entry["max_batch_size"]))

    def _entry(self) -> dict:
        models = served_models(self.url)
        if self.name not in models:
            raise ModelMissing(self.name, f"the Triton service at {self.url}")
        return models[self.name]

    # -- onnxruntime.InferenceSession surface -------------------------------------------------

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> list[str]:
        return ["Triton"]

    def version(self) -> int:
        """The version this call runs: the job's routed version if Triton serves it (a canary
        started for a version Triton has not loaded yet runs the stable one, and is recorded so),
        else the current stable one."""
        entry = self._entry()
        stable = int(entry["stable"])
        routed = canary.version_for(self.name, stable)
        return routed if str(routed) in entry["triton_models"] else stable

    def _triton_model(self, version: int) -> str:
        name = self._served_names.get(str(version))
        if name is None:  # a version served after this session was made: ask again
            name = self._entry()["triton_models"].get(str(version))
            if name is None:
                raise InferenceUnavailable(
                    f"The inference service at {self.url} does not serve {self.name} version {version}."
                )
            self._served_names[str(version)] = name
        return name

    def emap(self) -> np.ndarray:
        """inswapper's 512×512 emap of the version this job runs (the file lives with Triton)."""
        return self.connection.emap(self.name, self.version())

    def run(self, output_names: list[str] | None, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        wanted = list(output_names) if output_names else [o.name for o in self._outputs]
        version = self.version()
        count = max((len(v) for k, v in feeds.items() if self._batching.get(k) != "constant"), default=1)
        arrays = {}
        for name, value in feeds.items():
            value = np.asarray(value)
            if self._batching.get(name) == "constant":
                value = np.repeat(value[None], count, axis=0)  # one copy per item, see server.py
            arrays[name] = value
        chunks = []
        for start in range(0, count, self.max_batch_size):
            part = {k: v[start : start + self.max_batch_size] for k, v in arrays.items()}
            chunks.append(self.connection.infer(self._triton_model(version), version, part, wanted))
        canary.record(self.name, version)
        if len(chunks) == 1:
            return chunks[0]
        return [np.concatenate([c[i] for c in chunks], axis=0) for i in range(len(wanted))]
