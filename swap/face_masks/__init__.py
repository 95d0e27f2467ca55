"""Content masks for ONNX swappers: occlusion (XSeg) and face-parser regions (BiSeNet)."""
