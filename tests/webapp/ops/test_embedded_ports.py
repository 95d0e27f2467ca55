"""`visage_run`'s embedded servers never talk to another program that holds their port: a port in
use is refused by name (or, in `visage_run`, another port is taken, said loudly), and the server
that answers must be the child just started."""

from __future__ import annotations

import shutil
import socket

import pytest
import redis
from django.core.management.base import CommandError

from webapp.ops import embedded
from webapp.ops.management.commands.visage_run import Command


@pytest.fixture
def other_redis(tmp_path):
    """Another instance's Redis (the same bundled binary), holding a key of its own."""
    server = embedded.start_redis(tmp_path / "other-redis", persist=False)
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    with redis.Redis(host="127.0.0.1", port=port) as client:
        client.set("owner", "other instance")
    yield server, port
    server.stop()


def test_a_taken_redis_port_is_refused_naming_its_holder(other_redis, tmp_path):
    other, port = other_redis
    with pytest.raises(embedded.PortTakenError) as refused:
        embedded.start_redis(tmp_path / "ours", port=port, persist=False)
    assert str(port) in str(refused.value)
    assert f"pid {other.process.pid}" in str(refused.value)


def test_the_server_answering_must_be_the_child_started(other_redis, tmp_path, monkeypatch):
    """The race the port check cannot close (the port taken between the check and the bind): the
    other instance answers while our child fails to listen; start_redis must not hand it out."""
    other, port = other_redis
    monkeypatch.setattr(embedded, "port_is_free", lambda port: True)
    with pytest.raises(embedded.EmbeddedServerError, match="not the one just started"):
        embedded.start_redis(tmp_path / "ours", port=port, persist=False)
    assert other.process.poll() is None  # the other instance is left alone


@pytest.fixture
def taken_port():
    """A port another socket listens on."""
    with socket.socket() as intruder:
        intruder.bind(("127.0.0.1", 0))
        intruder.listen()
        yield intruder.getsockname()[1]


def first_pick_is(monkeypatch, port: int) -> None:
    """free_port() hands out `port` first, as if it had been free a moment earlier."""
    real_free_port, picks = embedded.free_port, iter([port])
    monkeypatch.setattr(embedded, "free_port", lambda: next(picks, None) or real_free_port())


def test_redis_on_a_port_it_picked_starts_again_when_the_port_is_taken_before_it_binds(
    taken_port, tmp_path, monkeypatch
):
    """The race a self-picked port has (free when picked, another program's when the server binds
    it): the first pick is a port another socket listens on, and the check that would see it is
    told it is free, as it was a moment earlier. The start must go on to a fresh port."""
    first_pick_is(monkeypatch, taken_port)
    real_port_is_free = embedded.port_is_free
    monkeypatch.setattr(embedded, "port_is_free", lambda port: port == taken_port or real_port_is_free(port))
    server = embedded.start_redis(tmp_path / "redis", persist=False)
    try:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        assert port != taken_port
        assert embedded.redis_process_id(port) == server.process.pid
        assert "Address already in use" in server.log_path.read_text()  # the first attempt's end
    finally:
        server.stop()


def test_a_port_picked_for_a_server_and_found_taken_is_picked_again(taken_port, tmp_path, monkeypatch):
    """The same race one step earlier (taken between the pick and the check): no PortTakenError for
    a port nobody asked for."""
    first_pick_is(monkeypatch, taken_port)
    server = embedded.start_redis(tmp_path / "redis", persist=False)
    try:
        assert f":{taken_port}/" not in server.url
        assert server.process.poll() is None
    finally:
        server.stop()


def test_visage_run_starts_its_own_redis_on_a_free_port(other_redis, tmp_path, settings, monkeypatch):
    other, port = other_redis
    monkeypatch.delenv("REDIS_URL", raising=False)  # restored after the test
    settings.DATA_DIR = tmp_path / "data"
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    command = Command()
    server = command.start_redis()
    try:
        ours = int(server.url.rsplit(":", 1)[1].split("/")[0])
        assert ours != port
        assert embedded.redis_process_id(ours) == server.process.pid != other.process.pid
        assert settings.REDIS_URL == server.url
        assert {queue["URL"] for queue in settings.RQ_QUEUES.values()} == {server.url}
        assert settings.CACHES["default"]["LOCATION"] == server.url
        with redis.Redis.from_url(settings.REDIS_URL) as client:
            assert client.get("owner") is None  # not the other instance's data
    finally:
        server.stop()


def test_visage_run_refuses_a_leftover_redis_on_its_own_data(tmp_path, settings, monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)
    settings.DATA_DIR = tmp_path / "data"
    leftover = embedded.start_redis(settings.DATA_DIR / "redis", persist=False)
    try:
        settings.REDIS_URL = leftover.url
        with pytest.raises(CommandError, match=f"pid {leftover.process.pid}"):
            Command().start_redis()
    finally:
        leftover.stop()


def test_a_taken_s3_port_is_refused_and_never_used(tmp_path, monkeypatch):
    with socket.socket() as intruder:
        intruder.bind(("127.0.0.1", 0))
        intruder.listen()
        port = intruder.getsockname()[1]
        with pytest.raises(embedded.PortTakenError, match=str(port)):
            embedded.start_s3(tmp_path / "s3", "k" * 8, "s" * 16, port=port)
        monkeypatch.setattr(embedded, "port_is_free", lambda port: True)
        with pytest.raises(embedded.EmbeddedServerError, match="not the one just started"):
            embedded.start_s3(tmp_path / "s3", "k" * 8, "s" * 16, port=port)


def test_a_second_visage_run_on_the_same_data_is_refused(tmp_path, settings):
    settings.DATA_DIR = tmp_path / "data"
    first = Command()
    first._lock_data_dir()
    try:
        with pytest.raises(CommandError, match="Another visage_run"):
            Command()._lock_data_dir()
    finally:
        first._lock_file.close()


def test_s3_starts_again_when_a_component_port_is_taken_before_weed_binds_it(tmp_path, monkeypatch):
    """The flake of the twenty-first session: a component port free when picked was taken before
    weed mini bound it, and weed exited. Here the first component port handed out is one another
    process listens on: the start must try again with fresh ports, not fail."""
    if shutil.which("minio"):
        pytest.skip("minio serves S3 here; the retry is weed mini's")
    picks = iter(range(100))
    real_free_port = embedded.free_port
    with socket.socket() as intruder:
        intruder.bind(("127.0.0.1", 0))
        intruder.listen()
        taken = intruder.getsockname()[1]
        # the first pick is the S3 port, the second weed's master.port
        monkeypatch.setattr(embedded, "free_port", lambda: taken if next(picks) == 1 else real_free_port())
        server = embedded.start_s3(tmp_path / "s3", "k" * 8, "s" * 16)
        try:
            assert server.process.poll() is None
            assert f"-master.port={taken}" not in server.process.args
            assert "is not available" in server.log_path.read_text()  # the first attempt's death
        finally:
            server.stop()


@pytest.mark.parametrize("line", [
    "E1205 21:06:05.554787 mini.go:1244 Port allocation failed: port 50477 for Master (specified by flag "
    "master.port) is not available on 127.0.0.1 and cannot be used",
    "F1204 s3.go:310 s3 failed to listen on grpc port 41095: bind: address already in use",
])
def test_a_lost_component_port_is_read_from_this_attempts_part_of_the_log(tmp_path, line):
    log = tmp_path / "s3.log"
    log.write_text(f"{line}\n")  # an earlier attempt's
    offset = log.stat().st_size
    assert not embedded._log_says(log, offset, embedded.WEED_PORT_CLASH)
    with log.open("a") as later:
        later.write(f"{line}\n")
    assert embedded._log_says(log, offset, embedded.WEED_PORT_CLASH)
