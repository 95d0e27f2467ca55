"""Known-bad images are matched for all of a screening's images in two queries: the known pHashes
are read once, not once an image (a clip's sampled frames were a full read of them each)."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from moderation import selectors
from moderation.models import ModerationRecord, Verdict

pytestmark = pytest.mark.django_db

NEAR = "00000000000000ff"  # 8 bits from BAD_PHASH: within the default distance
BAD_PHASH = "0000000000000000"


def _known_bad(sha256: str, phash: str, code: str = "content_rejected") -> ModerationRecord:
    verdict = Verdict.objects.create(subject_id=uuid.uuid4(), stage="input", decision="reject")
    return ModerationRecord.objects.create(
        verdict=verdict, role="target", sha256=sha256, phash=phash, dhash=phash, decision="reject",
        known_bad=True, known_bad_code=code,
    )


def test_every_image_matched_in_two_queries(settings):
    settings.VISAGE_PHASH_MAX_DISTANCE = 10
    exact = _known_bad("a" * 64, "ffffffffffffffff")
    looks_like = _known_bad("b" * 64, BAD_PHASH)
    _known_bad("c" * 64, "0f0f0f0f0f0f0f0f", code="text_rejected")  # matched by its exact bytes only
    images = [("a" * 64, "1234123412341234"), ("d" * 64, NEAR), ("e" * 64, "f0f0f0f0f0f0f0f0"), ("c" * 64, "aaaa")]
    images += [(f"{i:064x}", "ffff0000ffff0000") for i in range(20)]

    with CaptureQueriesContext(connection) as queries:
        matches = selectors.known_bad_matches(images)

    assert len(queries.captured_queries) == 3  # exact hashes, the known pHashes, the near one's record
    assert matches[0] == (exact, 0)
    assert matches[1] == (looks_like, 8)
    assert matches[2] is None
    assert matches[3][0].sha256 == "c" * 64 and matches[3][1] == 0
    assert matches[4:] == [None] * 20


def test_all_matched_exactly_reads_no_phashes():
    record = _known_bad("a" * 64, BAD_PHASH)
    with CaptureQueriesContext(connection) as queries:
        assert selectors.known_bad_matches([("a" * 64, NEAR)]) == [(record, 0)]
    assert len(queries.captured_queries) == 1
    assert selectors.known_bad_matches([]) == []
