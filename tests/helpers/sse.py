"""Reading a server-sent event stream from a Django streaming response."""

from __future__ import annotations

import json


def parse(chunk: bytes) -> dict:
    """One SSE block: its fields (data as JSON), or {"comment": ...} for a comment-only block."""
    block: dict = {}
    for line in chunk.decode().splitlines():
        if line.startswith(":"):
            block.setdefault("comment", line[1:].strip())
        elif line:
            name, _, value = line.partition(": ")
            block[name] = json.loads(value) if name == "data" else value
    return block


def job_events(response, count: int) -> list[dict]:
    """The next `count` `event: job` blocks of an open stream (keep-alives skipped)."""
    found = []
    for chunk in response.streaming_content:
        block = parse(chunk)
        if block.get("event") == "job":
            found.append(block)
            if len(found) == count:
                return found
    raise AssertionError(f"the stream ended after {len(found)} of {count} events: {found}")
