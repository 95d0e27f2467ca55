"""Face detectors: dlib HOG (default, no download) and ONNX ones (see swap.models)."""
