"""Video jobs through the API: submit one, download its result."""

from __future__ import annotations

from pathlib import Path

import requests
from django.core.files.uploadedfile import SimpleUploadedFile


def post_video_job(client, source: bytes, target: bytes, *, filename: str = "clip.mp4", **fields):
    files = {
        "source": SimpleUploadedFile("source.png", source),
        "target": SimpleUploadedFile(filename, target),
        "consent": "true",
    }
    return client.post("/api/v1/jobs", {**files, **fields}, format="multipart")


def download_result(body: dict, tmp_path: Path) -> Path:
    response = requests.get(body["result_url"], timeout=10)
    assert response.status_code == 200
    path = tmp_path / "result.mp4"
    path.write_bytes(response.content)
    return path
