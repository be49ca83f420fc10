"""The whole service as a user runs it: `transcriber serve` in a real process."""

from __future__ import annotations

import asyncio
import signal
import socket
from pathlib import Path

import aiohttp

from tests.helpers.processes import free_port, start_server, wait_ready
from tests.helpers.settings import SettingsFactory
from transcriber.cli.exits import EXIT_FATAL
from transcriber.cli.serve import serve
from transcriber.service.app import build_app
from transcriber.web import keys


def test_serve_answers_and_stops_gracefully_on_sigterm(data_dir: Path) -> None:
    port = free_port()
    proc = start_server(data_dir, port)
    try:
        wait_ready(port, proc)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            body = b""
            while chunk := sock.recv(65536):
                body += chunk
        assert b"transcriber_writer_mailbox_depth" in body
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=20)[0].decode()
        assert proc.returncode == 0
        assert "serve_stopped" in output
        # Beside the logs, one line for the person who started it (issue 42, first hour).
        assert (f"transcriber: the web app is at http://127.0.0.1:{port}/ "
                "(Ctrl-C or SIGTERM stops it)") in output.splitlines()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert (data_dir / "transcriber.sqlite3").exists()


def test_serve_refuses_a_bad_setting_with_exit_2(data_dir: Path) -> None:
    proc = start_server(data_dir, free_port(), TRANSCRIBER_STORAGE_READ_CONNECTIONS="0")
    output = proc.communicate(timeout=30)[0].decode()
    assert proc.returncode == 2
    assert output.strip().splitlines() == [
        "transcriber: bad setting storage.read_connections: must be at least 1"]


async def test_the_service_stops_loudly_when_the_writer_dies(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(server={"port": free_port()}, pipeline={"workers": 0})
    app = build_app(settings)
    served = asyncio.create_task(serve(settings, app))
    url = f"http://127.0.0.1:{settings.server.port}/healthz"
    async with aiohttp.ClientSession() as session:
        for _ in range(100):
            try:
                async with session.get(url) as resp:
                    if resp.status == 200:
                        break
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.05)
        writer_task = app[keys.WRITER].task
        assert writer_task is not None
        writer_task.cancel()  # the actor dies without being asked to stop
        exit_code = await asyncio.wait_for(served, 20)
    assert exit_code == EXIT_FATAL
