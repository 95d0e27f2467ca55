"""How Django's synchronous code runs under the ASGI server: at most WEB_THREADS requests' worth at once.

Under ASGI, Django runs each request's synchronous parts (sync views, most middleware) on a thread of
that request's own, made for it; nothing bounds how many run at once, and each opens its own
database connection. This slot count keeps the bound the WSGI server had (WEB_THREADS threads per
process): a request for a sync view holds a slot from start to end (webapp.asgi), an async view
(the waiting endpoints) only around its synchronous steps, never while it waits.
"""

from __future__ import annotations

import asyncio
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
