"""The embedded S3 server (`weed mini`) hands out the buckets' objects only through S3 with the
credentials: none of its other ports (filer, volume server, WebDAV, admin UI, gateways) serves a
stored face to a local process that has no credentials, or to a browser page that rebinds a name
to 127.0.0.1."""

from __future__ import annotations

import io
import shutil
import time

import psutil
import pytest
import requests
from minio import Minio

from webapp.ops import embedded

pytestmark = pytest.mark.skipif(shutil.which("minio") is not None, reason="tests weed mini, not MinIO")

FACE = b"a stored face, not for anonymous eyes " * 40


def _listening_ports(pid: int) -> set[int]:
    ports = set()
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        ports |= {c.laddr.port for c in process.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    return ports


def test_only_the_s3_port_with_credentials_serves_an_object(tmp_path):
    server = embedded.start_s3(tmp_path / "s3", "visage-key", "visage-secret-0123")
    try:
        client = Minio(server.url, access_key="visage-key", secret_key="visage-secret-0123", secure=False,
                       region="us-east-1")
        deadline = time.monotonic() + 60
        while True:  # the S3 port answers before the filer behind it is ready
            try:
                client.make_bucket("uploads")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        client.put_object("uploads", "7/job/source", io.BytesIO(FACE), len(FACE))
        assert client.get_object("uploads", "7/job/source").read() == FACE
        s3_port = int(server.url.rsplit(":", 1)[1])
        assert requests.get(f"http://{server.url}/uploads/7/job/source", timeout=5).status_code == 403

        others = _listening_ports(server.process.pid) - {s3_port}
        assert len(others) >= 4  # master, volume server, filer and their gRPC ports at least
        served = []
        for port in sorted(others):
            for path in ("/buckets/uploads/7/job/source", "/uploads/7/job/source", "/buckets/uploads/", "/"):
                try:
                    response = requests.get(f"http://127.0.0.1:{port}{path}", timeout=5)
                except requests.RequestException:
                    continue  # a gRPC port: no HTTP answer
                if FACE[:20] in response.content or b"7/job" in response.content or b"uploads" in response.content:
                    served.append((port, path, response.status_code))
        assert served == []
    finally:
        server.stop()
