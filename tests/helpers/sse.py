"""Reading a server-sent event stream from a Django streaming response."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator


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


def chunks(response) -> Iterator[bytes]:
    """The stream's chunks as they come. Its body is an async generator (it waits on the server's
    event loop): driven here on one event loop of its own."""
    if not response.is_async:
        yield from response.streaming_content
        return
    loop = asyncio.new_event_loop()
    stream = aiter(response.streaming_content)
    try:
        while True:
            try:
                yield loop.run_until_complete(anext(stream))
            except StopAsyncIteration:
                return
    finally:
        loop.run_until_complete(stream.aclose())
        loop.close()


def job_events(response, count: int) -> list[dict]:
    """The next `count` `event: job` blocks of an open stream (keep-alives skipped)."""
    found = []
    for chunk in chunks(response):
        block = parse(chunk)
        if block.get("event") == "job":
            found.append(block)
            if len(found) == count:
                return found
    raise AssertionError(f"the stream ended after {len(found)} of {count} events: {found}")
