"""Receivers that misbehave must not hold the webhooks worker or bend the outbox's promises: the
status line decides a try (the body is never read), a row's tries stay capped when workers die
mid-try, a URL with a password in it is refused, and the Host header is the URL's."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.utils import timezone

from tests.helpers.webhook_receiver import Receiver
from tests.webapp.conftest import drain, post_job
from webapp.jobs import webhooks
from webapp.jobs.dispatch import PUSH_MAX_ATTEMPTS, WEBHOOK_MAX_ATTEMPTS
from webapp.jobs.models import PushDelivery, WebhookDelivery
from webapp.jobs.services import push_outbox, webhook_outbox

HANG_GUARD_S = 30  # a post that has its status returns at once; this only stops a hung test


class RawServer:
    """One connection: reads the request, answers `head`, then `tail(server, conn)` sends the body."""

    def __init__(self, head: bytes, tail):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.sent = 0
        self.stop = threading.Event()
        self.head, self.tail = head, tail
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        conn, _ = self.sock.accept()
        conn.settimeout(1)
        try:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
            while len(body) < length:
                body += conn.recv(65536)
            conn.sendall(self.head)
            self.tail(self, conn)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.sock.close()


def post_in_thread(port: int) -> dict:
    outcome: dict = {}

    def run():
        destination = webhooks.Destination("http", "127.0.0.1", port, "127.0.0.1", "/hook")
        try:
            outcome["status"] = webhooks.post(destination, b"{}", {})
        except Exception as exc:  # noqa: BLE001 - reported to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    outcome["still_reading"] = thread.is_alive()
    return outcome


def test_a_receiver_that_trickles_its_body_does_not_hold_the_worker():
    """One byte every half second never trips the read timeout: the body used to be read to the end."""

    def trickle(server, conn):
        while not server.stop.is_set():
            conn.sendall(b"x")
            time.sleep(0.5)

    server = RawServer(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n", trickle)
    try:
        outcome = post_in_thread(server.port)
        assert not outcome["still_reading"] and outcome.get("status") == 200, outcome
    finally:
        server.close()


def test_a_receiver_that_answers_a_huge_body_is_not_read_into_memory():
    def flood(server, conn):
        chunk = b"x" * (1 << 20)
        conn.settimeout(5)
        for _ in range(200):
            if server.stop.is_set():
                return
            conn.sendall(chunk)
            server.sent += len(chunk)

    server = RawServer(b"HTTP/1.1 200 OK\r\nContent-Length: 209715200\r\n\r\n", flood)
    try:
        outcome = post_in_thread(server.port)
        assert outcome.get("status") == 200, outcome
        assert server.sent < 32 << 20, f"the delivery read {server.sent >> 20} MB of the receiver's body"
    finally:
        server.close()


def test_the_host_header_is_the_urls_with_an_ipv6_literal_in_brackets():
    class Server6(HTTPServer):
        address_family = socket.AF_INET6

    hosts = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            hosts.append(self.headers["Host"])
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = Server6(("::1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        assert webhooks.post(webhooks.check_destination(f"http://[::1]:{port}/hook"), b"{}", {}) == 204
        assert hosts == [f"[::1]:{port}"]
    finally:
        server.shutdown()
    assert webhooks.host_header(webhooks.Destination("http", "h.example", 443, "203.0.113.5", "/")) == "h.example:443"
    assert webhooks.host_header(webhooks.Destination("https", "h.example", 443, "203.0.113.5", "/")) == "h.example"


@pytest.fixture
def receiver():
    receiving = Receiver()
    yield receiving
    receiving.close()


def canceled_job(client, astronaut_pair, **fields) -> str:
    source, target, _ = astronaut_pair
    created = post_job(client, source, target, **fields)
    assert created.status_code == 201, created.content
    job_id = created.json()["id"]
    assert client.post(f"/api/v1/jobs/{job_id}/cancel").status_code == 200
    return job_id


@pytest.mark.django_db(transaction=True)
def test_a_receiver_that_answered_200_with_a_short_body_is_delivered(api_a, astronaut_pair, settings):
    def short_body(server, conn):
        conn.sendall(b"ok")  # of the 10 bytes it declared; the connection stays open
        server.stop.wait(15)

    server = RawServer(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", short_body)
    try:
        job_id = canceled_job(api_a, astronaut_pair, webhook_url=f"http://127.0.0.1:{server.port}/hook")
        drain([settings.WEBHOOK_QUEUE])
        delivery = WebhookDelivery.objects.get(job_id=job_id)
        assert delivery.delivered_at is not None and delivery.attempts == 1, delivery.last_error
    finally:
        server.close()


@pytest.mark.django_db(transaction=True)
def test_a_webhook_whose_tries_are_spent_is_given_up_not_sent_again(api_a, astronaut_pair, receiver, settings):
    """Tries whose worker died (killed, out of memory) raise nothing, so nothing gave the row up: the
    sweeper enqueued it again and every new try was one more than WEBHOOK_MAX_ATTEMPTS."""
    job_id = canceled_job(api_a, astronaut_pair, webhook_url=receiver.url)
    WebhookDelivery.objects.filter(job_id=job_id).update(attempts=WEBHOOK_MAX_ATTEMPTS)
    webhook_outbox.webhooks_sweep_undelivered(now=timezone.now() + timedelta(hours=1))
    drain([settings.WEBHOOK_QUEUE])
    assert receiver.requests == []
    delivery = WebhookDelivery.objects.get(job_id=job_id)
    assert delivery.abandoned_at is not None and delivery.attempts == WEBHOOK_MAX_ATTEMPTS


@pytest.mark.django_db(transaction=True)
def test_a_push_whose_tries_are_spent_is_given_up_not_sent_again(api_a, astronaut_pair, fcm_standin, settings):
    registered = api_a.post(
        "/api/v1/devices", {"platform": "fcm", "token": "fcm-a:" + "a" * 150, "app_id": "com.example.visage"},
        format="json",
    )
    assert registered.status_code == 201, registered.content
    job_id = canceled_job(api_a, astronaut_pair)
    PushDelivery.objects.filter(job_id=job_id).update(attempts=PUSH_MAX_ATTEMPTS)
    push_outbox.pushes_sweep_undelivered(now=timezone.now() + timedelta(hours=1))
    drain([settings.WEBHOOK_QUEUE])
    assert fcm_standin.sends == []
    assert PushDelivery.objects.get(job_id=job_id).abandoned_at is not None


@pytest.mark.django_db(transaction=True)
def test_a_webhook_url_with_a_password_is_refused_at_submit(api_a, astronaut_pair, receiver):
    """Deliveries send no Authorization, and the URL is echoed in every job answer and webhook body."""
    source, target, _ = astronaut_pair
    url = receiver.url.replace("http://", "http://visage:s3cret@")
    refused = post_job(api_a, source, target, webhook_url=url)
    assert refused.status_code == 400, refused.content
    assert "user name or password" in refused.json()["errors"]["webhook_url"][0]


@pytest.mark.django_db(transaction=True)
def test_the_links_in_a_webhook_body_are_absolute_with_the_public_url(api_a, astronaut_pair, receiver, settings):
    """A receiver has no address to resolve `/api/v1/jobs/…` against; the API answer's are absolute."""
    settings.PUBLIC_URL = "https://visage.example.com"
    job_id = canceled_job(api_a, astronaut_pair, webhook_url=receiver.url)
    drain([settings.WEBHOOK_QUEUE])
    data = json.loads(receiver.requests[0][1])["data"]
    assert data["urls"]["self"] == f"https://visage.example.com/api/v1/jobs/{job_id}"
    assert all(url.startswith("https://visage.example.com/") for url in data["urls"].values() if url)
