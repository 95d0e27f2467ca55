"""Where the models run, under the model adapters (swap.onnx_adapter and the stages above it).

- `local`: onnxruntime in this process; the plain cached session (`sessions`), or the stable and
  canary versions of a model behind one session surface while a canary runs.
- `triton_client`: `TritonSession`, the same surface backed by the Triton service
  (VISAGE_INFERENCE=triton; the server itself is the `python -m swap serve` tool, swap.serve).
- `runs`: warm-up and batched, metered runs on any of those sessions; `clock`: the per-frame
  clock those runs are billed on; `dtypes`: ONNX types as numpy dtypes; `emap`: inswapper's emap.

This package's init imports nothing: the Triton server imports `swap.inference.dtypes` in its own
venv (numpy, onnxruntime, nvidia-pytriton only).
"""
