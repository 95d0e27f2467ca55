"""How Django's synchronous code runs under the ASGI server: at most WEB_THREADS requests' worth at once.

Requests for sync views (every page and API call but the long-poll and the event stream) run on
`sync_executor()`, a pool of at most WEB_THREADS long-lived threads per process, as a WSGI server's
threads are (webapp.asgi.serve_sync); the async views' synchronous steps run on a thread Django
makes for their request (run_sync). The slot count keeps the bound the WSGI server had: a request
for a sync view holds a slot from start to end, an async view only around its synchronous steps,
never while it waits.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

API_PREFIX = "/api/"


def max_request_bytes() -> int:
    """The largest body any view accepts (the API's job submit): every photo and the target at
    their limits, plus form fields. Larger bodies are refused unread (webapp.asgi.serve_sync,
    api.middleware.ProblemJsonMiddleware)."""
    per_file = max(settings.MAX_UPLOAD_BYTES, settings.VIDEO_MAX_BYTES)
    return (settings.MAX_SOURCE_PHOTOS + 1) * per_file + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def sync_slots() -> asyncio.Semaphore:
    """This event loop's slots (one loop per server process; tests make many)."""
    loop = asyncio.get_running_loop()
    if loop not in _slots:
        _slots[loop] = asyncio.Semaphore(settings.WEB_THREADS)
    return _slots[loop]


_executor: tuple[int, ThreadPoolExecutor] | None = None
_executor_lock = threading.Lock()


def sync_executor() -> ThreadPoolExecutor:
    """This process's pool for sync views' requests (made after the server forks its workers)."""
    global _executor
    with _executor_lock:
        if _executor is None or _executor[0] != os.getpid():
            _executor = (os.getpid(), ThreadPoolExecutor(settings.WEB_THREADS, thread_name_prefix="web-sync"))
        return _executor[1]


def shut_down_sync_executor() -> None:
    """At the server's shutdown: each of the pool's threads closes its database connections (kept
    between requests, CONN_MAX_AGE) once its request is done, then the threads exit."""
    global _executor
    with _executor_lock:
        if _executor is not None and _executor[0] == os.getpid():
            executor = _executor[1]
            threads = len(executor._threads)
            if threads:
                # One call per thread: each waits at the barrier until every thread has taken one.
                together = threading.Barrier(threads)

                def close_own_connections() -> None:
                    connections.close_all()
                    try:
                        together.wait(timeout=5)
                    except threading.BrokenBarrierError:
                        pass  # a thread busy with a long request: the process ends with it anyway

                for call in [executor.submit(close_own_connections) for _ in range(threads)]:
                    call.result()
            executor.shutdown(wait=True)
        _executor = None


async def run_sync(function: Callable[..., Any], *args, **kwargs) -> Any:
    """`function` on the request's thread (the one its other sync parts use), within a slot."""
    async with sync_slots():
        return await sync_to_async(function, thread_sensitive=True)(*args, **kwargs)


# Requests a web process admits at once besides its open waits (granian's --backpressure is the
# waits' cap plus this). granian's default, its listen backlog / workers (512 with 2 workers), counts
# waits too: a worker holding that many stopped taking any request, every page and API call then
# waiting in the kernel's queue until a wait ended (up to 30 s; 300 s for an event stream).
OTHER_REQUESTS_AT_ONCE = 1024


def web_server_command(host: str, port: str, workers: int = 2) -> list[str]:
    """granian, not runserver: the same server as production (the image runs it through
    `manage.py visage_web`). ASGI: event streams and long-polls wait on the event loop; other
    requests run Django's sync code, at most WEB_THREADS at once per process (sync_slots above).
    bench/waiting_clients.py and bench/scaleout.py start this too."""
    return [sys.executable, "-m", "granian", "--interface", "asgi", "webapp.asgi:application",
            "--host", host, "--port", port, "--workers", str(workers),
            "--backpressure", str(settings.WAITS_PER_PROCESS + OTHER_REQUESTS_AT_ONCE),
            "--respawn-failed-workers", "--workers-kill-timeout", "10", "--access-log"]
