"""Job events: every change of a job is published here, and only here, after its commit.

Each change is appended to its owner's Redis Stream `visage:events:user:<id>` (XADD, MAXLEN ~1000).
One stream serves live delivery and resumption alike: a reader blocks with XREAD BLOCK from the
last id it saw, so nothing published between "read what was there" and "wait for more" can slip
past it, and a reconnecting SSE client resumes from its Last-Event-ID. Pub/sub would drop exactly
those messages (it keeps nothing) and needs a subscribed connection per listener besides.

The same event is also appended, under the same entry id, to its job's own short stream
`visage:events:job:<id>` (the newest JOB_STREAM_MAXLEN, gone JOB_STREAM_TTL_S after the job's
last change): a long-poll waits for one job, and reads there, so a position taken on the user's
stream is a position on the job's too. Waiting on the user's stream instead woke every long-poll
of that user at every change of any of the user's jobs: an app's back end with 16 long-polls open
under one account read each event 16 times (bench/jobpath.py's burst).

The same script keeps each job's representation record (owner, version, ETag parts), which orders
its events: records and events only move forward in `Job.version`, so a reader that loaded an
older row, or a publisher that lost a race, can never append an older state after a newer one.
The record never answers a request: `GET /api/v1/jobs/{id}` reads the row's version (one
primary-key query), because a change whose publish hit a Redis outage leaves the record behind.

Redis is the notification path, never the source of truth: when it is down a change is logged
and counted (visage_job_event_failures_total), and the transition goes on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import TypeVar

import redis
import redis.asyncio
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from redis.exceptions import RedisError

from webapp.telemetry import metrics

from . import etags
from .models import Job

logger = logging.getLogger(__name__)
T = TypeVar("T")

STREAM_MAXLEN = 1000  # per user, approximate (MAXLEN ~): far more than a page of jobs changes
# How long a representation record is trusted without a refresh: bounds what a change whose
# publish hit a Redis fault could hide (every publish and every full GET refreshes the record).
RECORD_TTL_S = 120
STREAM_TTL_S = 7 * 86400  # an idle user's stream goes; a reader absent that long fetches its jobs anew
# A job's own stream (what its long-polls read): a wait reads it from a position taken just before,
# so it needs only the newest few events, and only while the job changes.
JOB_STREAM_MAXLEN = 32
JOB_STREAM_TTL_S = 15 * 60
ANSWER_S = 5  # how long Redis may take to answer a command on the waiting client, past any block
MAX_BLOCK_S = 30  # the longest single XREAD BLOCK we issue (long-poll cap; SSE blocks less)
EVENT_ID = re.compile(r"\A\d{1,20}(-\d{1,20})?\Z")

# KEYS: record, user's stream, job's stream. ARGV: version, owner, base, expiring, terminal, deleted,
# ttl, maxlen, event, stream ttl, job stream's maxlen, job stream's ttl.
_PUBLISH = """
local version = tonumber(ARGV[1])
local recorded = tonumber(redis.call('HGET', KEYS[1], 'version') or '-1')
if version > recorded then
  redis.call('HSET', KEYS[1], 'version', ARGV[1], 'owner', ARGV[2], 'base', ARGV[3],
             'expiring', ARGV[4], 'terminal', ARGV[5], 'deleted', ARGV[6])
end
local published = tonumber(redis.call('HGET', KEYS[1], 'published') or '-1')
if version <= published then return false end
redis.call('HSET', KEYS[1], 'published', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[7])
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[8], '*', 'event', ARGV[9])
redis.call('EXPIRE', KEYS[2], ARGV[10])
redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[11], id, 'event', ARGV[9])
redis.call('EXPIRE', KEYS[3], ARGV[12])
return id
"""
# KEYS: record. ARGV: version, owner, base, expiring, terminal, ttl.
_REMEMBER = """
local recorded = tonumber(redis.call('HGET', KEYS[1], 'version') or '-1')
if tonumber(ARGV[1]) <= recorded then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'owner', ARGV[2], 'base', ARGV[3],
           'expiring', ARGV[4], 'terminal', ARGV[5], 'deleted', '0')
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 1
"""

def release_database_connection() -> None:
    """Before a long wait (SSE, long-poll): give the database connection back, or a waiting request
    would hold a PostgreSQL connection for minutes: 64 waiting browsers would take 64 of the
    server's connections. Django reconnects on
    the next query. Inside a transaction (tests, ATOMIC_REQUESTS) the connection stays."""
    if not connection.in_atomic_block:
        connection.close()


_clients: dict[tuple[str, str], redis.Redis] = {}
_clients_lock = threading.Lock()
_waiting_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, redis.asyncio.Redis]] = (
    weakref.WeakKeyDictionary()
)


def _client(kind: str) -> redis.Redis:
    """Lazily made clients on REDIS_URL (one per URL, so a changed setting takes effect): `quick`
    fails fast (publishing must never stall a transition)."""
    key = (kind, settings.REDIS_URL)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = redis.Redis.from_url(
                settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2, decode_responses=True
            )
        return _clients[key]


def waiting_client() -> redis.asyncio.Redis:
    """The running event loop's client for waits (XREAD BLOCK) and wait slots: call it through
    `within`. The waits run on the loop, not on server threads (webapp.api.waiting); one client per
    loop, as its connections belong to the loop that opened them."""
    clients = _waiting_clients.setdefault(asyncio.get_running_loop(), {})
    if settings.REDIS_URL not in clients:  # per URL too, as for _client
        clients[settings.REDIS_URL] = redis.asyncio.Redis.from_url(
            settings.REDIS_URL,
            socket_connect_timeout=2,
            # No socket timeout: with one, redis-py sends each command under asyncio.wait_for, which
            # on Python 3.11 returns the send's result when a cancel lands as the send finishes: the
            # cancel is lost, and the XREAD after it blocked for its whole wait although its client
            # had gone (68 of 400 XREADs cancelled within 3 ms of their start; 0 without it). Each
            # call is bounded by `within` instead.
            socket_timeout=None,
            decode_responses=True,
            # One connection per open wait; a wait past the cap fails at once (RedisError: it ends
            # without waiting). redis.asyncio's default cap (100) would be far too low.
            max_connections=settings.WAITS_PER_PROCESS,
        )
    return clients[settings.REDIS_URL]


async def within(seconds: float, command: Awaitable[T]) -> T:
    """A `waiting_client` command that must answer within `seconds` (a RedisError when it does not:
    a Redis that stopped answering)."""
    try:
        async with asyncio.timeout(seconds):
            return await command
    except TimeoutError as exc:
        raise redis.exceptions.TimeoutError(f"Redis did not answer within {seconds:g} s") from exc


def stream_key(user_id: int) -> str:
    return f"visage:events:user:{user_id}"


def job_stream_key(job_id: uuid.UUID | str) -> str:
    return f"visage:events:job:{job_id}"


def record_key(job_id: uuid.UUID | str) -> str:
    return f"visage:job:{job_id}:representation"


# --- publishing ----------------------------------------------------------------------------------


def job_changed(job_id: uuid.UUID) -> None:
    """Call after any write that changes what a job shows: publishes once the transaction commits
    (at once in autocommit). The event carries the committed row as read then."""
    transaction.on_commit(lambda: _publish_current(job_id), robust=True)


def job_deleted(*, job_id: uuid.UUID, owner_id: int, state: str, version: int) -> None:
    """The job's rows are gone: clients drop it (a late reader can no longer record it either)."""
    transaction.on_commit(
        lambda: _publish(
            owner_id=owner_id,
            representation=etags.Representation(
                job_id=str(job_id), owner_id=owner_id, version=version + 1, base="", expiring=False, terminal=True
            ),
            event={"id": str(job_id), "state": state, "progress": 0, "deleted": True},
        ),
        robust=True,
    )


def _publish_current(job_id: uuid.UUID) -> None:
    row = Job.objects.filter(id=job_id).values(*etags.ETAG_FIELDS).first()
    if row is None:
        return  # deleted meanwhile: its deletion publishes
    _publish(
        owner_id=row["owner_id"],
        representation=etags.representation(row),
        event={"id": str(job_id), "state": row["state"], "progress": row["progress"], "deleted": False},
    )


def _publish(*, owner_id: int, representation: etags.Representation, event: dict) -> None:
    event = {
        **event,
        "version": representation.version,
        "terminal": representation.terminal,
        "updated_at": timezone.now().isoformat().replace("+00:00", "Z"),
    }
    try:
        _client("quick").eval(
            _PUBLISH, 3, record_key(representation.job_id), stream_key(owner_id),
            job_stream_key(representation.job_id), representation.version, owner_id, representation.base,
            int(representation.expiring), int(representation.terminal), int(event["deleted"]), RECORD_TTL_S,
            STREAM_MAXLEN, json.dumps(event, separators=(",", ":")), STREAM_TTL_S, JOB_STREAM_MAXLEN,
            JOB_STREAM_TTL_S,
        )
    except RedisError as exc:
        metrics.JOB_EVENT_FAILURES.labels(operation="publish").inc()
        logger.warning("job %s: could not publish its change (Redis down?): %s", representation.job_id, exc)


# --- representation records (the cheap 304) -----------------------------------------------------------


def remember(job: Job) -> str:
    """Record the representation just built for `job`; returns its ETag. Never fails."""
    representation = etags.representation(etags.fields_of(job))
    try:
        _client("quick").eval(
            _REMEMBER, 1, record_key(job.id), representation.version, representation.owner_id,
            representation.base, int(representation.expiring), int(representation.terminal), RECORD_TTL_S,
        )
    except RedisError as exc:
        metrics.JOB_EVENT_FAILURES.labels(operation="remember").inc()
        logger.warning("job %s: could not record its ETag (Redis down?): %s", job.id, exc)
    return representation.etag()


# --- reading a user's stream ---------------------------------------------------------------------


@dataclass(frozen=True)
class JobEvent:
    stream_id: str
    data: dict  # id, state, progress, version, terminal, deleted, updated_at


def position(*, user_id: int) -> str | None:
    """The id of the user's newest event ("0" when none): read it before loading what you then
    wait on, and nothing published in between is missed. None when Redis is down."""
    try:
        newest = _client("quick").xrevrange(stream_key(user_id), count=1)
    except RedisError as exc:
        logger.warning("user %s: could not read the event stream (Redis down?): %s", user_id, exc)
        return None
    return newest[0][0] if newest else "0"


def trimmed_after(*, user_id: int, after: str) -> bool:
    """Whether events after `after` may have been trimmed away (the stream reached MAXLEN and its
    oldest kept event is newer than `after`): the reader must then fetch its jobs again."""
    client = _client("quick")
    if client.xlen(stream_key(user_id)) < STREAM_MAXLEN:
        return False  # never trimmed: a stream only shrinks by trimming, which keeps MAXLEN entries
    oldest = client.xrange(stream_key(user_id), count=1)
    return bool(oldest) and _parts(after) < _parts(oldest[0][0])


MAX_ID_PART = 2**64 - 1  # each half of a Redis stream id is an unsigned 64-bit number


def event_id_valid(stream_id: str) -> bool:
    """An id Redis could have given: two unsigned 64-bit numbers (anything else made XREAD fail,
    and the stream ended at once, every reconnect)."""
    return bool(EVENT_ID.match(stream_id)) and max(_parts(stream_id)) <= MAX_ID_PART


def newer(stream_id: str, than: str) -> bool:
    return _parts(stream_id) > _parts(than)


def _parts(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq or 0)


async def read(*, user_id: int, after: str, block_s: float) -> list[JobEvent]:
    """The user's events after `after`, waiting up to `block_s` for the first; [] when none came.
    Raises RedisError."""
    return await _read(stream_key(user_id), after=after, block_s=block_s)


async def read_job(*, job_id: uuid.UUID | str, after: str, block_s: float) -> list[JobEvent]:
    """One job's events after `after` (a position on its owner's stream), as `read`."""
    return await _read(job_stream_key(job_id), after=after, block_s=block_s)


async def _read(key: str, *, after: str, block_s: float) -> list[JobEvent]:
    block_ms = max(1, min(int(block_s * 1000), MAX_BLOCK_S * 1000))
    reply = await within(
        block_ms / 1000 + ANSWER_S, waiting_client().xread({key: after}, count=100, block=block_ms)
    )
    return [
        JobEvent(stream_id=entry_id, data=json.loads(fields["event"]))
        for _stream, entries in reply or []
        for entry_id, fields in entries
    ]


async def job_updates(*, job_id: uuid.UUID, after: str, timeout_s: float) -> AsyncIterator[JobEvent]:
    """The events of one job after `after` (a position on the user's stream), as they come, for at
    most `timeout_s` seconds (the long-poll), read from the job's own stream: the user's other jobs
    wake no one here. Stops early, logged, when Redis fails."""
    deadline = time.monotonic() + timeout_s
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            batch = await read_job(job_id=job_id, after=after, block_s=remaining)
        except RedisError as exc:
            logger.warning("job %s: stopped waiting for its events (Redis down?): %s", job_id, exc)
            return
        for event in batch:
            after = event.stream_id
            yield event
