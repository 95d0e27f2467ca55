"""Model registry (manifest.json: models, licences, each stage's `auto` order), versions and
canaries, the `models` CLI, the dlib→ONNX converter (`dlib_onnx`) and stand-in models (`standins`)."""
