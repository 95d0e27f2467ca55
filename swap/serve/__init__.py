"""Triton as Visage's optional inference backend (VISAGE_INFERENCE=triton).

- `launcher` (Visage's venv): `python -m swap serve` writes a serve plan (models, versions,
  batching) and starts `server` in the Triton venv (var/triton-venv, Debian's /usr/bin/python3:
  PyTriton's Python-backend stub needs a libpython that matches the interpreter, which the
  pyenv CPython build does not provide).
- `server` (Triton venv: numpy, onnxruntime, nvidia-pytriton only): binds every version of every
  model to Triton with dynamic batching, plus `visage_catalog` (models, versions, roll-out state,
  ONNX metadata, batch sizes seen).
- `client` (Visage's venv): `TritonSession`, the onnxruntime-session surface the adapters use
  (`get_inputs`, `get_outputs`, `run`), so pre/post-processing is the local path's, unchanged.
"""
