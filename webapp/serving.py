"""How Django's synchronous code runs under the ASGI server: at most WEB_THREADS requests' worth at once.

Under ASGI, Django runs each request's synchronous parts (sync views, most middleware) on a thread of
that request's own, made for it; nothing bounds how many run at once, and each opens its own
database connection. This slot count keeps the bound the WSGI server had (WEB_THREADS threads per
process): a request for a sync view holds a slot from start to end (webapp.asgi), an async view
(the waiting endpoints) only around its synchronous steps, never while it waits.
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings

_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def sync_slots() -> asyncio.Semaphore:
    """This event loop's slots (one loop per server process; tests make many)."""
    loop = asyncio.get_running_loop()
    if loop not in _slots:
        _slots[loop] = asyncio.Semaphore(settings.WEB_THREADS)
    return _slots[loop]


async def run_sync(function: Callable[..., Any], *args, **kwargs) -> Any:
    """`function` on the request's thread (the one its other sync parts use), within a slot."""
    async with sync_slots():
        return await sync_to_async(function, thread_sensitive=True)(*args, **kwargs)


def web_server_command(host: str, port: str) -> list[str]:
    """granian, not runserver: the same server as production (deploy/image/entrypoint.sh). ASGI:
    event streams and long-polls wait on the event loop; other requests run Django's sync code, at
    most WEB_THREADS at once per process (sync_slots above). bench/waiting_clients.py and
    bench/scaleout.py start this too."""
    return [sys.executable, "-m", "granian", "--interface", "asgi", "webapp.asgi:application",
            "--host", host, "--port", port, "--workers", "2",
            "--respawn-failed-workers", "--workers-kill-timeout", "10", "--access-log"]
