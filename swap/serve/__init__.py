"""The Triton server tool (`python -m swap serve`), above the engine: VISAGE_INFERENCE=triton's
workers are its clients through swap.inference.triton_client; nothing in the pipeline imports this.

- `launcher` (Visage's venv): `python -m swap serve` writes the standard model repository
  (swap.models.repository, Python-backend variant) and starts PyTriton's tritonserver binary from
  the Triton venv (var/triton-venv, Debian's /usr/bin/python3: the Python-backend stub needs a
  libpython that matches the interpreter, which the pyenv CPython build does not provide).
- `server` (Triton venv: numpy, onnxruntime): the Python-backend model.py copied into every
  version folder; runs that version's model.onnx, batches merged by Triton's dynamic batcher.
"""
