"""The Triton side: every version of every model in the serve plan, bound with dynamic batching.

Runs in the Triton venv (numpy, onnxruntime, nvidia-pytriton; nothing else of Visage's
dependencies), started by `swap.serve.launcher`:

    var/triton-venv/bin/python -m swap.serve.server --plan var/triton/plan.json

Each model version is one onnxruntime session behind a PyTriton `@batch` function; Triton's
dynamic batcher merges requests from many client workers (many jobs) into one run. How ONNX
inputs map onto Triton's batched tensors:

- an input whose first dimension is symbolic is batched as is ([N, ...] → item shape [...]);
- a model exported with a fixed batch of 1 is still batched in Triton and run row by row here;
- an input without a batch dimension on a dynamic model (codeformer's `weight` [1]) is sent
  once per item by the client ([N, 1]); rows with equal values run together.

`visage_catalog` (not batched) answers the clients' questions: which models and versions are
served, the roll-out state (re-read from versions.json on every call, so `models promote`
takes effect without a restart), each model's ONNX input/output metadata, inswapper's emap, and
a histogram of the batch sizes each model version actually ran.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import onnxruntime as ort

# Installed only in the Triton venv (swap.serve.launcher); nothing in Visage's venv imports this module.
from pytriton.decorators import batch
from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
from pytriton.triton import Triton, TritonConfig

# numpy only (swap.inference's package init imports nothing), so it loads in the Triton venv.
from swap.inference.dtypes import numpy_type

log = logging.getLogger("visage.triton")

CATALOG_MODEL = "visage_catalog"


def versioned_name(triton_name: str, version: int) -> str:
    """Triton model name of one version: `inswapper_128-v2` (Triton version 2).

    Why not one name with several versions: PyTriton (0.7) gives each bound model one data
    socket named after the model (`{model_name}-data.sock` in pytriton/proxy/model.py), so
    binding version 2 of a name whose version 1 is loaded fails ("Address already in use").
    One Triton model per version still gives per-version batching, readiness and metrics
    (`model="inswapper_128-v2",version="2"`).
    """
    return f"{triton_name}-v{int(version)}"


def _dims(shape) -> list:
    """ONNX dims as JSON: ints, or the symbolic name (a string) for dynamic ones."""
    return [d if isinstance(d, int) and d > 0 else (d if isinstance(d, str) else "?") for d in shape]


def describe(session: ort.InferenceSession) -> dict:
    """What a client needs to act like onnxruntime: names, ONNX shapes and types, and how each
    input is batched ("batched" | "fixed1" | "constant")."""
    inputs = session.get_inputs()
    first = inputs[0].shape
    dynamic = not (isinstance(first[0], int) and first[0] > 0)
    described = []
    for node in inputs:
        symbolic_batch = bool(node.shape) and not (isinstance(node.shape[0], int) and node.shape[0] > 0)
        kind = ("batched" if symbolic_batch else "constant") if dynamic else "fixed1"
        described.append({"name": node.name, "shape": _dims(node.shape), "type": node.type, "batching": kind})
    return {
        "inputs": described,
        "outputs": [{"name": o.name, "shape": _dims(o.shape), "type": o.type} for o in session.get_outputs()],
        "dynamic_batch": dynamic,
    }


def triton_item_shape(entry: dict) -> tuple[int, ...]:
    """The per-item shape Triton declares (-1 for dynamic dims)."""
    dims = entry["shape"] if entry.get("batching") == "constant" else entry["shape"][1:]
    return tuple(d if isinstance(d, int) else -1 for d in dims)


class VersionRunner:
    """One model version: the session and the batched call Triton makes."""

    def __init__(self, name: str, version: int, path: str, providers: list, threads: int) -> None:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.log_severity_level = 3
        self.name, self.version = name, version
        self.session = ort.InferenceSession(path, sess_options=so, providers=providers)
        self.meta = describe(self.session)
        self.output_names = [o["name"] for o in self.meta["outputs"]]
        self.batch_sizes: Counter[int] = Counter()
        self._lock = threading.Lock()

    def __call__(self, **inputs: np.ndarray) -> dict[str, np.ndarray]:
        count = len(next(iter(inputs.values())))
        with self._lock:
            self.batch_sizes[count] += 1
        kinds = {entry["name"]: entry["batching"] for entry in self.meta["inputs"]}
        if not self.meta["dynamic_batch"]:
            rows = [
                self.session.run(None, {k: v[i : i + 1] for k, v in inputs.items()}) for i in range(count)
            ]
            outputs = [
                np.concatenate([row[j] for row in rows], axis=0) for j in range(len(self.output_names))
            ]
        else:
            constants = [k for k, kind in kinds.items() if kind == "constant"]
            outputs = self._run_grouped(inputs, constants, count)
        return dict(zip(self.output_names, outputs, strict=True))

    def _run_grouped(
        self, inputs: dict[str, np.ndarray], constants: list[str], count: int
    ) -> list[np.ndarray]:
        if not constants:
            return self.session.run(None, inputs)
        groups: dict[bytes, list[int]] = {}
        for i in range(count):
            key = b"".join(np.ascontiguousarray(inputs[k][i]).tobytes() for k in constants)
            groups.setdefault(key, []).append(i)
        results: list[np.ndarray] | None = None
        for rows in groups.values():
            index = np.asarray(rows)
            feeds = {k: (v[rows[0]] if k in constants else v[index]) for k, v in inputs.items()}
            out = self.session.run(None, feeds)
            if results is None:
                results = [np.empty((count, *o.shape[1:]), dtype=o.dtype) for o in out]
            for target, part in zip(results, out, strict=True):
                target[index] = part
        assert results is not None
        return results


def _catalog_response(plan: dict, runners: dict[tuple[str, int], VersionRunner]) -> dict:
    state_path = Path(plan["models_dir"]) / "versions.json"
    try:
        state = json.loads(state_path.read_text()) if state_path.is_file() else {}
    except (OSError, ValueError):
        state = {}
    models = {}
    for model in plan["models"]:
        name = model["name"]
        served = sorted(v["version"] for v in model["versions"])
        rollout = state.get(name, {})
        stable = int(rollout.get("stable", model["stable"]))
        canary = rollout.get("canary")
        first = runners[(name, served[0])]
        models[name] = {
            "triton_name": model["triton_name"],
            "triton_models": {str(v): versioned_name(model["triton_name"], v) for v in served},
            "versions": served,
            "stable": stable,
            "canary": int(canary) if canary is not None else None,
            "max_batch_size": model["max_batch_size"] if model["batching"] else 1,
            "batching": model["batching"],
            "metadata": first.meta,
            "batch_sizes": {
                str(v): dict(runners[(name, v)].batch_sizes) for v in served if (name, v) in runners
            },
        }
    return {"models": models}


def serve(plan: dict) -> None:
    available = set(ort.get_available_providers())
    providers: list = [p for p in plan.get("providers") or [] if p in available] or ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in providers:
        device = {"device_id": int(plan.get("device_id", 0))}
        providers = [(p, device) if p == "CUDAExecutionProvider" else p for p in providers]
    threads = int(plan.get("intra_op_threads", 0))
    runners: dict[tuple[str, int], VersionRunner] = {}
    failures: list[str] = []
    for model in plan["models"]:
        for entry in model["versions"]:
            try:
                runners[(model["name"], entry["version"])] = VersionRunner(
                    model["name"], entry["version"], entry["path"], providers, threads
                )
            except Exception as exc:  # noqa: BLE001 - reported by name, the others still serve
                failures.append(f"{model['name']} v{entry['version']}: {exc}")
    if failures:
        # A model that fails to load is reported by name (the catalog leaves it out too).
        for line in failures:
            log.error("model failed to load: %s", line)
        plan = dict(plan)
        plan["models"] = [
            dict(m, versions=[v for v in m["versions"] if (m["name"], v["version"]) in runners])
            for m in plan["models"]
        ]
        plan["models"] = [m for m in plan["models"] if m["versions"]]

    emaps = {}
    for model in plan["models"]:
        for entry in model["versions"]:
            if entry.get("emap"):
                emaps[(model["name"], entry["version"])] = np.load(entry["emap"]).astype(np.float32)

    config = TritonConfig(
        http_port=int(plan["http_port"]),
        grpc_port=int(plan["grpc_port"]),
        metrics_port=int(plan["metrics_port"]),
        log_verbose=0,
        # In-flight requests get this long at shutdown; clients retry anything cut off.
        exit_timeout_secs=int(plan.get("exit_timeout_s", 5)),
    )
    with Triton(config=config) as triton:
        for model in plan["models"]:
            for entry in model["versions"]:
                runner = runners[(model["name"], entry["version"])]
                inputs = [
                    Tensor(name=i["name"], dtype=numpy_type(i["type"]), shape=triton_item_shape(i))
                    for i in runner.meta["inputs"]
                ]
                outputs = [
                    Tensor(name=o["name"], dtype=numpy_type(o["type"]), shape=triton_item_shape(o))
                    for o in runner.meta["outputs"]
                ]
                if model["batching"]:
                    batcher = DynamicBatcher(
                        max_queue_delay_microseconds=int(model["max_queue_delay_us"]),
                        preferred_batch_size=model.get("preferred_batch_sizes") or None,
                    )
                    cfg = ModelConfig(max_batch_size=int(model["max_batch_size"]), batcher=batcher)
                else:
                    # "Without batching": Triton still needs a batch dimension for these tensors;
                    # max_batch_size 1 and no queue delay means one request per model run.
                    cfg = ModelConfig(
                        max_batch_size=1, batcher=DynamicBatcher(max_queue_delay_microseconds=0)
                    )
                triton.bind(
                    model_name=versioned_name(model["triton_name"], entry["version"]),
                    model_version=int(entry["version"]),
                    infer_func=batch(runner),
                    inputs=inputs,
                    outputs=outputs,
                    config=cfg,
                    strict=True,
                )

        def catalog(requests):
            answer = _catalog_response(plan, runners)
            answer["failed"] = failures
            responses = []
            for request in requests:
                wanted = request.data["emap_of"].reshape(-1)[0]
                wanted = wanted.decode() if isinstance(wanted, bytes) else str(wanted)
                # PyTriton can't ship a zero-size tensor: (1, 1) stands for "no emap".
                emap = np.zeros((1, 1), np.float32)
                if wanted:
                    name, _, version = wanted.partition(":")
                    emap = emaps.get((name, int(version or 0)), emap)
                responses.append(
                    {"catalog": np.array([json.dumps(answer).encode()], dtype=np.object_), "emap": emap}
                )
            return responses

        triton.bind(
            model_name=CATALOG_MODEL,
            infer_func=catalog,
            inputs=[Tensor(name="emap_of", dtype=np.bytes_, shape=(1,))],
            outputs=[
                Tensor(name="catalog", dtype=np.bytes_, shape=(1,)),
                Tensor(name="emap", dtype=np.float32, shape=(-1, -1)),
            ],
            config=ModelConfig(batching=False),
            strict=False,
        )
        log.info("Triton serving %d model versions", len(runners))
        triton.serve()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m swap.serve.server")
    parser.add_argument("--plan", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    def _terminate(signum, frame):  # SIGTERM (Kubernetes, compose): PyTriton's graceful SIGINT path
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    # A parent started from a non-interactive shell in the background passes SIGINT on ignored;
    # PyTriton stops on KeyboardInterrupt, so take SIGINT back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    serve(json.loads(args.plan.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
