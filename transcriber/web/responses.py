"""JSON answers (orjson)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from transcriber.domain.shapes import to_json


def json_response(payload: Any, status: int = 200, **kwargs: Any) -> web.Response:
    """`payload`: a response shape (`domain.shapes`), or plain JSON-ready values."""
    return web.Response(body=to_json(payload), status=status,
                        content_type="application/json", **kwargs)
