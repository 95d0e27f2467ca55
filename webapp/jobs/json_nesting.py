"""How deep submitted JSON may nest: no request field of ours needs more than a few levels, and
Python's json module recurses once per level (RecursionError near 1,000), so deeper is refused."""

from __future__ import annotations

from typing import Any

MAX_JSON_DEPTH = 32


def json_too_deep(value: Any, *, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when lists/objects nest more than `limit` levels (an explicit stack: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
