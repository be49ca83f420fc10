"""Descriptor exhaustion: asyncio's reports fold into one `accept_failed` event per minute;
its retry on a listening socket closed meanwhile is no traceback."""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import Any

import pytest
from structlog.testing import capture_logs

from transcriber.web.connections import AcceptFailureLog


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _context(code: int) -> dict[str, Any]:
    # What asyncio's selector loop hands the handler when accept() fails.
    return {"message": "socket.accept() out of system resource",
            "exception": OSError(code, "Too many open files")}


def test_thousands_of_failed_accepts_make_one_event_a_minute() -> None:
    clock = _Clock()
    handler = AcceptFailureLog(clock)
    loop = asyncio.new_event_loop()
    try:
        with capture_logs() as logs:
            for tick in range(3000):  # 3000 failures over 150 s
                clock.now = tick * 0.05
                handler.handle(loop, _context(errno.EMFILE if tick % 2 else errno.ENFILE))
    finally:
        loop.close()
    assert [entry["event"] for entry in logs] == ["accept_failed"] * 3
    assert logs[0]["failures"] == 1
    assert logs[1]["failures"] == 1200  # everything folded since the first
    assert {entry["error"] for entry in logs} <= {"EMFILE", "ENFILE"}


def test_other_loop_errors_go_to_the_default_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    loop = asyncio.new_event_loop()
    monkeypatch.setattr(loop, "default_exception_handler", seen.append)
    try:
        handler = AcceptFailureLog(_Clock())
        context = {"message": "boom", "exception": ValueError("x")}
        handler.handle(loop, context)
        handler.handle(loop, {"message": "refused", "exception": OSError(errno.ECONNRESET, "")})
    finally:
        loop.close()
    assert len(seen) == 2


async def test_the_accept_retry_on_a_closed_listening_socket_is_no_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """asyncio's own retry, scheduled a second after EMFILE, meeting the listening
    socket closed at shutdown meanwhile (it raised ValueError: fd -1)."""
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(loop, "default_exception_handler", seen.append)
    loop.set_exception_handler(AcceptFailureLog(_Clock()).handle)
    listening = socket.socket()
    listening.close()
    try:
        with capture_logs() as logs:
            loop.call_soon(loop._start_serving, asyncio.Protocol, listening)  # type: ignore[attr-defined]
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert seen == []
    assert [entry["event"] for entry in logs] == ["accept_retry_after_close"]
