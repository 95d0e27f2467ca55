"""Face landmarkers: dlib's 68-point shape predictor (default) and ONNX ones."""
