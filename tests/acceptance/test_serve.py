"""The whole service as a user runs it: `transcriber serve` in a real process."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

from tests.conftest import SettingsFactory
from transcriber import keys
from transcriber.cli.exits import EXIT_FATAL
from transcriber.cli.serve import serve
from transcriber.service.app import build_app


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    data_dir: Path, port: int, *, fake_steps: str | None = None, **env: str
) -> subprocess.Popen[bytes]:
    """`transcriber serve` in a process of its own; with `fake_steps` (e.g.
    "normalize=60"), the test entry point that injects fake steps instead."""
    command = ([sys.executable, "-m", "transcriber.cli", "serve"] if fake_steps is None
               else [sys.executable, "-m", "tests.serve_with_fakes", "--steps", fake_steps])
    return _start(command, data_dir, port, env)


def start_server_with_descriptors(
    data_dir: Path, port: int, nofile: int, **env: str
) -> subprocess.Popen[bytes]:
    """`transcriber serve` allowed at most `nofile` descriptors (RLIMIT_NOFILE)."""
    command = [sys.executable, "-c",
               "import resource, runpy, sys; "
               f"resource.setrlimit(resource.RLIMIT_NOFILE, ({nofile}, {nofile})); "
               "sys.argv = ['transcriber', 'serve']; "
               "runpy.run_module('transcriber.cli', run_name='__main__')"]
    return _start(command, data_dir, port, env)


def _start(command: list[str], data_dir: Path, port: int,
           env: dict[str, str]) -> subprocess.Popen[bytes]:
    environment = {
        **os.environ,
        "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir),
        "TRANSCRIBER_SERVER_PORT": str(port),
        "TRANSCRIBER_PIPELINE_WORKERS": "0",
        **env,
    }
    return subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )


def wait_ready(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[0]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                sock.sendall(b"GET /readyz HTTP/1.0\r\n\r\n")
                if b"200 OK" in sock.recv(200):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError("server did not become ready")


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
