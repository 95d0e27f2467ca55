"""The worker side of VISAGE_INFERENCE=triton: an onnxruntime-like session backed by Triton.

Speaks only the standard KServe v2 / Triton protocol, so the same client talks to NVIDIA's
Triton loading `python -m swap models repository`'s repository and to the PyTriton stand-in
(`python -m swap serve`, swap.serve) that serves the same layout:

- which models and versions are served: the repository index (READY versions; failures by name);
- each model's interface: its config (inputs, outputs, `max_batch_size`) and Visage's metadata in
  the config's `parameters` (`visage_name`, `emap_model`, licence, stable version, ...);
- inswapper's emap: an infer call on the `<name>_emap` model at the same explicit version;
- runs: infer with an explicit `model_version`; batch fill: the statistics extension;
- billing: each run reports the model work it caused to swap.inference.clock (billed as GPU
  seconds instead of the RPC's wall time): the output `visage_compute_ns` when the model's config
  declares it (the stand-in: its onnxruntime run, each item's share of a batch), else the
  request's items times the model version's compute per item in Triton's statistics
  (compute_input + compute_infer + compute_output over the items of every batch executed since the
  last look, at most every STATS_TTL_S): queueing and the network are not billed.

`TritonSession` offers what the adapters use of `onnxruntime.InferenceSession`
(`get_inputs()`, `get_outputs()`, `run(outputs, feeds)`), so every adapter keeps its own pre-
and post-processing and gives bit-identical results to local inference on the same model files.
Which version runs comes from the canary router (`swap.models.canary`, read per job); what ran is
recorded on the job's routing.

gRPC by default (`grpc://host:8001`); `http://host:8000` works too (bench/triton.py measures both).
A server that cannot be reached, or a model that is not ready, raises `InferenceUnavailable`
(a transient fault: the job is retried, never charged).
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlparse

import numpy as np

from swap.errors import EngineError, InferenceUnavailable, ModelMissing
from swap.inference import clock as inference_clock
from swap.models import canary, repository

MODELS_TTL_S = 10.0  # versions loaded or unloaded in Triton (poll/explicit mode) reach workers within this
TIMEOUT_S = 60.0
READY_TIMEOUT_S = 2.0  # a health check must answer quickly even when Triton's host is gone
STATS_TTL_S = 5.0  # how often a worker reads a model's statistics to bill runs (NVIDIA's Triton)
COMPUTE_OUTPUT = repository.COMPUTE_OUTPUT  # the stand-in's per-item model work (swap.serve.server)
COMPUTE_PARTS = ("compute_input", "compute_infer", "compute_output")

log = logging.getLogger(__name__)

# Triton data types -> ONNX type strings (what the adapters read from an onnxruntime session)
TRITON_TO_ONNX = {"FP32": "tensor(float)", "FP16": "tensor(float16)", "FP64": "tensor(double)",
                  "INT64": "tensor(int64)", "INT32": "tensor(int32)", "UINT8": "tensor(uint8)",
                  "INT8": "tensor(int8)", "BOOL": "tensor(bool)"}  # fmt: skip


@dataclass(frozen=True)
class NodeArg:
    """onnxruntime.NodeArg's fields: name, shape (symbolic dims as strings), type."""

    name: str
    shape: list
    type: str


@dataclass(frozen=True)
class ServedModel:
    """One model as Triton serves it: READY versions and what its config says."""

    name: str  # Visage's (manifest) name, from the config's `visage_name` parameter
    triton_name: str
    versions: list[int]
    max_batch_size: int
    inputs: list[NodeArg]
    outputs: list[NodeArg]
    parameters: dict[str, str]
    reports_compute: bool = False  # the config declares COMPUTE_OUTPUT (the stand-in)

    @property
    def default_version(self) -> int:
        """The stable version the repository was written with, if served; else the newest."""
        stable = self.parameters.get("stable", "")
        return int(stable) if stable.isdigit() and int(stable) in self.versions else self.versions[-1]


def _endpoint(url: str) -> tuple[str, str]:
    """("grpc" | "http", "host:port") from grpc://host:port, http://host:port or host:port."""
    parsed = urlparse(url if "://" in url else f"grpc://{url}")
    protocol = parsed.scheme or "grpc"
    if protocol not in ("grpc", "http"):
        raise ValueError(f"VISAGE_TRITON_URL must start with grpc:// or http://, got {url!r}")
    return protocol, parsed.netloc


def _node(tensor: dict, batched: bool) -> NodeArg:
    dims = [int(d) for d in tensor.get("dims", [])]
    shape = (["N"] if batched else []) + [d if d > 0 else "?" for d in dims]
    datatype = str(tensor["data_type"]).removeprefix("TYPE_")
    return NodeArg(tensor["name"], shape, TRITON_TO_ONNX.get(datatype, "tensor(float)"))


class _Connection:
    """tritonclient clients, one per thread (the gRPC/HTTP clients are not shared across threads)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.protocol, self.address = _endpoint(url)
        self._local = threading.local()
        self._models: dict[str, ServedModel] | None = None
        self._failed: list[str] = []
        self._models_at = 0.0
        self._emaps: dict[tuple[str, int], np.ndarray] = {}
        # (model, version) -> (read at, compute ns, items, compute ns per item) from the statistics
        self._costs: dict[tuple[str, int], tuple[float, int, int, float | None]] = {}
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

    def _call(self, what: str, method: str, *args, **kwargs):
        """A control-plane call, answered as JSON for both protocols."""
        if self.protocol == "grpc":
            kwargs.update(as_json=True, client_timeout=TIMEOUT_S)
        try:
            return getattr(self.client(), method)(*args, **kwargs)
        except Exception as exc:  # translated into our own errors below
            raise _translate(exc, self.url, what) from exc

    def infer(
        self,
        model: str,
        version: int | None,
        arrays: dict[str, np.ndarray],
        outputs: list[str],
        *,
        reports_compute: bool = False,
    ) -> tuple[list[np.ndarray], int | None]:
        """The outputs, and (`reports_compute`: the model has COMPUTE_OUTPUT) the model work in ns
        the server says this request caused; None when it says nothing, as NVIDIA's backends."""
        outputs = [*outputs, COMPUTE_OUTPUT] if reports_compute else list(outputs)
        module = self.module
        inputs = []
        for name, array in arrays.items():
            array = np.ascontiguousarray(array)
            tensor = module.InferInput(name, list(array.shape), module.np_to_triton_dtype(array.dtype))
            tensor.set_data_from_numpy(array)
            inputs.append(tensor)
        requested = [module.InferRequestedOutput(name) for name in outputs]
        kwargs = {"model_version": str(version) if version else ""}
        if self.protocol == "grpc":
            kwargs["client_timeout"] = TIMEOUT_S
        try:
            result = self.client().infer(model, inputs, outputs=requested, **kwargs)
        except Exception as exc:  # translated into our own errors below
            raise _translate(exc, self.url, model) from exc
        arrays_out = [result.as_numpy(name) for name in outputs]
        if reports_compute:
            return arrays_out[:-1], int(arrays_out[-1].sum())
        return arrays_out, None

    def compute_ns(self, model: str, version: int, items: int) -> float | None:
        """`items`' share of model work at `version`, from Triton's statistics: the compute time
        per item over the batches executed since the last look (every STATS_TTL_S at most)."""
        key = (model, version)
        with self._lock:
            cached = self._costs.get(key)
        if cached is not None and time.monotonic() - cached[0] < STATS_TTL_S and cached[3] is not None:
            return items * cached[3]
        stats = self._call(model, "get_inference_statistics", model, str(version))
        spent = done = 0
        for entry in stats.get("model_stats", []):
            if str(entry.get("version")) != str(version):
                continue
            for batch in entry.get("batch_stats", []):
                spent += sum(int(batch.get(part, {}).get("ns", 0)) for part in COMPUTE_PARTS)
                done += int(batch["batch_size"]) * int(batch.get("compute_infer", {}).get("count", 0))
        per_item = cached[3] if cached is not None else None
        if cached is not None and done > cached[2]:
            per_item = (spent - cached[1]) / (done - cached[2])
        elif cached is None and done:
            per_item = spent / done
        with self._lock:
            self._costs[key] = (time.monotonic(), spent, done, per_item)
        return None if per_item is None else items * per_item

    # -- what is served ---------------------------------------------------------------------------

    def models(self, *, refresh: bool = False) -> dict[str, ServedModel]:
        """{Visage model name: ServedModel} of every model with a READY version."""
        with self._lock:
            fresh = self._models is not None and time.monotonic() - self._models_at < MODELS_TTL_S
            if fresh and not refresh:
                return self._models
        index = self._call("the repository index", "get_model_repository_index")
        entries = index.get("models", []) if isinstance(index, dict) else index
        ready: dict[str, list[int]] = {}
        failed = []
        for entry in entries:
            version = str(entry.get("version", ""))
            if entry.get("state") == "READY" and version.isdigit():
                ready.setdefault(entry["name"], []).append(int(version))
            elif entry.get("state") == "UNAVAILABLE" and entry.get("reason", "") not in ("", "unloaded"):
                reason = str(entry["reason"]).strip().splitlines()[0]
                failed.append(f"{entry['name']} v{version}: {reason}")
        models = {}
        for triton_name, versions in ready.items():
            config = self._call(triton_name, "get_model_config", triton_name)
            config = config.get("config", config)
            parameters = {k: v.get("string_value", "") for k, v in (config.get("parameters") or {}).items()}
            batched = int(config.get("max_batch_size", 0)) > 0
            served = ServedModel(
                name=parameters.get("visage_name") or triton_name,
                triton_name=triton_name,
                versions=sorted(versions),
                max_batch_size=int(config.get("max_batch_size", 0)),
                inputs=[_node(t, batched) for t in config.get("input", [])],
                outputs=[_node(t, batched) for t in config.get("output", []) if t["name"] != COMPUTE_OUTPUT],
                parameters=parameters,
                reports_compute=any(t["name"] == COMPUTE_OUTPUT for t in config.get("output", [])),
            )
            models[served.name] = served
        with self._lock:
            self._models, self._failed, self._models_at = models, failed, time.monotonic()
        return models

    def failed(self) -> list[str]:
        with self._lock:
            return list(self._failed)

    def emap(self, model: ServedModel, version: int) -> np.ndarray:
        """inswapper's emap of `version`: the `emap_model` parameter names the model that returns it."""
        key = (model.name, version)
        with self._lock:
            if key in self._emaps:
                return self._emaps[key]
        emap_model = model.parameters.get("emap_model")
        if not emap_model:
            raise EngineError(f"The inference service at {self.url} gives no emap for {model.name}.")
        (emap,), _ = self.infer(emap_model, version, {"version": np.array([version], np.int32)}, ["emap"])
        with self._lock:
            self._emaps[key] = emap
        return emap

    def batch_sizes(self, triton_name: str) -> dict[int, dict[int, int]]:
        """{version: {batch size: model executions}} from Triton's statistics extension."""
        stats = self._call(triton_name, "get_inference_statistics", triton_name)
        sizes: dict[int, dict[int, int]] = {}
        for entry in stats.get("model_stats", []):
            counts = sizes.setdefault(int(entry["version"]), {})
            for batch in entry.get("batch_stats", []):
                counts[int(batch["batch_size"])] = int(batch["compute_infer"]["count"])
        return sizes

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
        or "not found" in lowered
        or isinstance(exc, (ConnectionError, OSError))
    )
    if unreachable:
        return InferenceUnavailable(
            f"The inference service at {url} cannot run {model}: {text.splitlines()[0] if text else exc!r}"
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


def served_models(url: str) -> dict[str, ServedModel]:
    """{model: ServedModel} of what the Triton service at `url` serves (InferenceUnavailable if down)."""
    return connection(url).models()


def batch_sizes(url: str, name: str) -> dict[int, dict[int, int]]:
    """{version: {batch size: executions}} Triton ran for model `name` (its statistics)."""
    return connection(url).batch_sizes(repository.triton_name(name))


def server_ready(url: str) -> bool:
    return connection(url).ready()


def readiness(url: str) -> dict:
    """For /healthz: is Triton up, which models it serves, which failed to load (by name)."""
    conn = connection(url)
    if not conn.ready():
        return {"ready": False, "url": url, "models": {}, "failed": []}
    try:
        models = conn.models(refresh=True)
    except EngineError as exc:
        return {"ready": False, "url": url, "models": {}, "failed": [], "error": str(exc)}
    listed = {m.name: {"versions": m.versions} for m in models.values() if not m.parameters.get("emap_of")}
    return {"ready": True, "url": url, "models": listed, "failed": conn.failed()}


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
        model = self._model()
        self.triton_name = model.triton_name
        self._inputs = model.inputs
        self._outputs = model.outputs
        # 0: Triton cannot batch this model (a fixed-batch export): requests go as the adapter shaped them.
        self.max_batch_size = model.max_batch_size
        self.reports_compute = model.reports_compute

    def _model(self) -> ServedModel:
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
        """The version this call runs: the job's routed version (swap.models.canary, read per job)
        if Triton serves it, else the served stable one. A canary Triton has not loaded yet runs
        the stable version, recorded so and logged."""
        model = self._model()
        default = model.default_version
        routed = canary.version_for(self.name, default)
        if routed not in model.versions:
            log.warning(
                "%s version %s is not served by %s; running version %s", self.name, routed, self.url, default
            )
            return default
        return routed

    def emap(self) -> np.ndarray:
        """inswapper's 512×512 emap of the version this job runs (fetched from Triton, cached)."""
        return self.connection.emap(self._model(), self.version())

    def run(self, output_names: list[str] | None, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        wanted = list(output_names) if output_names else [o.name for o in self._outputs]
        version = self.version()
        arrays = {name: np.asarray(value) for name, value in feeds.items()}
        if self.max_batch_size <= 0:
            outputs, compute_ns = self.connection.infer(
                self.triton_name, version, arrays, wanted, reports_compute=self.reports_compute
            )
            self._bill(version, 1, compute_ns)
            canary.record(self.name, version)
            return outputs
        count = len(next(iter(arrays.values())))
        chunks = []
        for start in range(0, count, self.max_batch_size):
            part = {k: v[start : start + self.max_batch_size] for k, v in arrays.items()}
            outputs, compute_ns = self.connection.infer(
                self.triton_name, version, part, wanted, reports_compute=self.reports_compute
            )
            self._bill(version, len(next(iter(part.values()))), compute_ns)
            chunks.append(outputs)
        canary.record(self.name, version)
        if len(chunks) == 1:
            return chunks[0]
        return [np.concatenate([c[i] for c in chunks], axis=0) for i in range(len(wanted))]

    def _bill(self, version: int, items: int, compute_ns: int | None) -> None:
        """Report this run's model work to the job's clock (swap.inference.clock bills it instead of
        the call's wall time); metering never fails a swap (unreported: the wall time is billed)."""
        if compute_ns is None:
            try:
                compute_ns = self.connection.compute_ns(self.triton_name, version, items)
            except EngineError as exc:
                log.warning("no statistics to bill %s v%s by: %s", self.triton_name, version, exc)
                return
        if compute_ns is not None:
            inference_clock.report_compute(compute_ns / 1e9)
