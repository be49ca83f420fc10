"""aiohttp's log of a malformed request must not carry the request's bytes."""

from __future__ import annotations

import logging
import sys

from aiohttp.http_exceptions import LineTooLong

from transcriber.core.observability import MalformedRequestFilter


def _record(error: BaseException) -> logging.LogRecord:
    try:
        raise error
    except BaseException:
        info = sys.exc_info()
    return logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1,
                             "Error handling request from %s", ("127.0.0.1",), info)


def test_a_malformed_request_is_not_logged_with_its_bytes() -> None:
    assert not MalformedRequestFilter().filter(_record(LineTooLong(b"secret-name.mp3", "8190")))


def test_other_errors_pass_unchanged() -> None:
    assert MalformedRequestFilter().filter(_record(RuntimeError("a bug")))
