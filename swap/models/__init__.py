"""Model registry (manifest.json), adapters and the `models` CLI."""
