"""HTTP metrics: requests by route pattern and status, request duration by route."""

from __future__ import annotations

import asyncio
import time

from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber.core.observability import HTTP_REQUEST_SECONDS, HTTP_REQUESTS
from transcriber.web.errors import route_label


@web.middleware
async def metrics_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    started = time.perf_counter()
    route = route_label(request)
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:  # redirects and errors that passed the error layer
        status = exc.status
        raise
    except asyncio.CancelledError:
        status = 499  # the client went away (nginx's convention)
        raise
    finally:
        HTTP_REQUESTS.labels(route, str(status)).inc()
        HTTP_REQUEST_SECONDS.labels(route).observe(time.perf_counter() - started)
