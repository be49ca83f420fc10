"""`close_after` when the client resets between the answer and the EOF."""

import errno
from unittest import mock

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from transcriber.web import errors


class _ResetTransport(mock.Mock):
    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        # What asyncio's selector transport raises from shutdown(SHUT_WR) once the
        # peer's RST has arrived: ENOTCONN, an OSError that is not a ConnectionError.
        raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")


async def test_a_peer_gone_before_the_eof_is_not_an_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    body = mock.Mock(is_eof=lambda: False)  # the client is still sending
    request = make_mocked_request("POST", "/app/audiorecords", payload=body,
                                  transport=_ResetTransport())
    response = web.json_response({"error": "too_large"}, status=413)

    async def prepared(_: web.Request) -> None:
        return None

    async def ended() -> None:
        return None

    monkeypatch.setattr(response, "prepare", prepared)
    monkeypatch.setattr(response, "write_eof", ended)
    await errors.close_after(request, response)  # must not raise
