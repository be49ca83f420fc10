"""JSON answers (orjson)."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web


def json_response(payload: Any, status: int = 200, **kwargs: Any) -> web.Response:
    return web.Response(body=orjson.dumps(payload), status=status,
                        content_type="application/json", **kwargs)
