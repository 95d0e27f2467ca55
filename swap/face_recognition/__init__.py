"""Identity embeddings: dlib's 128-d ResNet (default) and ONNX ones."""
