"""A wait whose client went away is cancelled by the server; the cancel must end it at once, whenever
it lands. With a socket timeout on the waiting client, redis-py sent each command under
asyncio.wait_for, which on Python 3.11 swallows a cancel that lands as the send finishes: the XREAD
then blocked for its whole wait (68 of 400 cancelled within 3 ms of their start), an event stream
for its five minutes, holding the user's wait slot and a Redis connection for nothing."""

from __future__ import annotations

import asyncio
import uuid

import django_rq

from webapp.api import wait_slots
from webapp.jobs import events

BLOCK_S = 20  # each read would block this long if the cancel were lost
CANCELS = 300


def test_a_wait_cancelled_at_any_moment_ends_at_once():
    user_id = -uuid.uuid4().int % 10**9  # a stream nobody writes to

    async def scenario() -> list[int]:
        lost = []
        for attempt in range(CANCELS):
            read = asyncio.create_task(events.read(user_id=user_id, after="$", block_s=BLOCK_S))
            # From at once to 3 ms in: before the connection is taken, while the command is sent,
            # while Redis blocks.
            await asyncio.sleep((attempt % 31) / 10_000)
            read.cancel()
            finished, _ = await asyncio.wait([read], timeout=BLOCK_S / 4)
            if not finished:
                lost.append(attempt)  # (asyncio.run cancels it again at the end)
        return lost

    assert asyncio.run(scenario()) == []


def test_a_slot_taken_as_its_client_goes_away_is_given_back_with_the_request():
    """The request's end gives back what its wait took (webapp.asgi): also a slot whose take was
    cancelled half way (its script still ran in Redis)."""
    user_id = -uuid.uuid4().int % 10**9
    key = wait_slots.leases_key(user_id)

    async def one_request(delay_s: float) -> None:
        async with wait_slots.given_back_at_the_end():
            take = asyncio.create_task(wait_slots.take(user_id=user_id, seconds=60))
            await asyncio.sleep(delay_s)
            take.cancel()  # the client went away: the wait never gives the slot back itself
            await asyncio.gather(take, return_exceptions=True)

    async def scenario() -> None:
        for attempt in range(100):
            await one_request((attempt % 21) / 10_000)

    asyncio.run(scenario())
    assert django_rq.get_connection("default").zcard(key) == 0
