"""Build-time check of the GPU image: onnxruntime must be the GPU build, not shadowed by the CPU one.

`nudenet` (and other packages) depend on the CPU `onnxruntime`; both distributions install the
same `onnxruntime` module, so whichever is installed last wins. This fails the build when the
CPU build is installed, or when CUDA libraries are present but onnxruntime lists no CUDA provider.
"""

from __future__ import annotations

import ctypes.util
import importlib.metadata
import sys

import onnxruntime


def installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def main() -> int:
    providers = onnxruntime.get_available_providers()
    cuda_libraries = {name: ctypes.util.find_library(name) for name in ("cudart", "cublas", "cudnn")}
    print(f"onnxruntime {onnxruntime.__version__} from {onnxruntime.__file__}")
    print(f"providers: {providers}")
    print(f"CUDA libraries: {cuda_libraries}")
    problems = []
    if installed("onnxruntime"):
        problems.append("the CPU distribution 'onnxruntime' is installed and shadows 'onnxruntime-gpu'")
    if not installed("onnxruntime-gpu"):
        problems.append("'onnxruntime-gpu' is not installed")
    if "CUDAExecutionProvider" not in providers and any(cuda_libraries.values()):
        problems.append("CUDA libraries are present but onnxruntime offers only " + ", ".join(providers))
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
