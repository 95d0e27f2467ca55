"""A mobile client's side of a direct upload: declare the file, PUT its parts straight to S3 with
the presigned URLs, resume from the part list, complete."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import requests


def start_upload(client, data: bytes, *, kind: str, content_type: str):
    return client.post(
        "/api/v1/uploads",
        {
            "kind": kind,
            "size_bytes": len(data),
            "content_type": content_type,
            "sha256": hashlib.sha256(data).hexdigest(),
        },
        format="json",
    )


def put_part(part: dict, data: bytes, part_size_bytes: int) -> requests.Response:
    start = (part["part_number"] - 1) * part_size_bytes
    return requests.put(part["url"], data=data[start : start + part["size_bytes"]], timeout=60)


def send_parts(upload: dict, data: bytes, numbers: Iterable[int]) -> list[int]:
    """PUT the numbered parts; the numbers that S3 accepted."""
    by_number = {p["part_number"]: p for p in upload["parts"]}
    sent = []
    for number in numbers:
        response = put_part(by_number[number], data, upload["part_size_bytes"])
        assert response.status_code == 200, response.text
        sent.append(number)
    return sent


def upload_whole(client, data: bytes, *, kind: str, content_type: str) -> dict:
    """Start, send every part, complete: the completed upload's JSON (asserting each step)."""
    created = start_upload(client, data, kind=kind, content_type=content_type)
    assert created.status_code == 201, created.content
    upload = created.json()
    send_parts(upload, data, [p["part_number"] for p in upload["parts"]])
    completed = client.post(f"/api/v1/uploads/{upload['id']}/complete")
    assert completed.status_code == 200, completed.content
    return completed.json()
