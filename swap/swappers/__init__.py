"""Face swappers: the classical landmark warp + Poisson blend (default) and ONNX ones."""
