"""Telemetry that every webapp package records into: metric definitions (metrics.py) and the log
context (context.py, logs.py). It imports nothing of the project, so the lowest layer may use it;
the /metrics endpoint, scrape-time collectors and GPU sampling live in webapp/ops."""
