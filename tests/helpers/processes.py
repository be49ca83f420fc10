"""Real `transcriber serve` processes for the acceptance tests: a free port, a start, ready."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    data_dir: Path, port: int, *, fake_steps: str | None = None, role: str = "all",
    **env: str,
) -> subprocess.Popen[bytes]:
    """`transcriber serve --role ROLE` in a process of its own; with `fake_steps` (e.g.
    "normalize=60"), the test entry point that injects fake steps instead."""
    command = ([sys.executable, "-m", "transcriber.cli", "serve"] if fake_steps is None
               else [sys.executable, "-m", "tests.serve_with_fakes", "--steps", fake_steps])
    return _start([*command, "--role", role], data_dir, port, env)


def start_server_under(
    wrapper: tuple[str, ...], data_dir: Path, port: int, **env: str
) -> subprocess.Popen[bytes]:
    """`transcriber serve` run by `wrapper` (a tracer and its options, e.g. strace)."""
    command = [*wrapper, sys.executable, "-m", "transcriber.cli", "serve"]
    return _start(command, data_dir, port, env)


def start_server_with_fake_recognizer(
    data_dir: Path, port: int, *, role: str = "all", **env: str
) -> subprocess.Popen[bytes]:
    """A real serve with the real steps (ffmpeg) and the fake recognizer of
    `transcriber.testing`, which answers at once (`tests.serve_with_fakes`)."""
    command = [sys.executable, "-m", "tests.serve_with_fakes", "--fake-recognizer",
               "--role", role]
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
