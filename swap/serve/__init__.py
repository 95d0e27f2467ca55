"""The Triton server tool (`python -m swap serve`), above the engine: VISAGE_INFERENCE=triton's
workers are its clients through swap.inference.triton_client; nothing in the pipeline imports this.

- `launcher` (Visage's venv): `python -m swap serve` writes a serve plan (models, versions,
  batching) and starts `server` in the Triton venv (var/triton-venv, Debian's /usr/bin/python3:
  PyTriton's Python-backend stub needs a libpython that matches the interpreter, which the
  pyenv CPython build does not provide).
- `server` (Triton venv: numpy, onnxruntime, nvidia-pytriton only): binds every version of every
  model to Triton with dynamic batching, plus `visage_catalog` (models, versions, roll-out state,
  ONNX metadata, batch sizes seen).
"""
