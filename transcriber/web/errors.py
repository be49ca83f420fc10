"""One error shape for every 4xx/5xx answer: `{"error": {"code", "message"}}`.

Handlers raise `ApiError`; aiohttp's own errors (unknown route, wrong method,
body too large) are rewritten into the same shape; anything unexpected
becomes a generic 500. Messages are written here or by the handler, never
taken from an exception's text, so SQL, paths, file names and storage URLs
cannot reach a response. The log line names the route and the error class.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import orjson
import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber.errors import WriterUnavailable

log = structlog.get_logger(__name__)

# The codes of aiohttp's own errors, by status.
_STATUS_CODES: Mapping[int, tuple[str, str]] = {
    400: ("bad_request", "the request is malformed"),
    401: ("unauthorized", "no identity"),
    404: ("not_found", "nothing here"),
    405: ("method_not_allowed", "this method is not allowed here"),
    413: ("payload_too_large", "the request body is too large"),
    415: ("unsupported_media_type", "the media type is not supported"),
    416: ("range_not_satisfiable", "the requested range is not satisfiable"),
    429: ("rate_limited", "too many requests"),
}


class ApiError(Exception):
    """An answer with an error status; `message` is shown to the client as is."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        close: bool = False,
    ) -> None:
        super().__init__(code)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})
        # Close the connection instead of draining a request body left unread.
        self.close = close


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> web.Response:
    body = orjson.dumps({"error": {"code": code, "message": message}})
    return web.Response(body=body, status=status, content_type="application/json",
                        headers=headers)


def not_found(message: str = "no such record") -> ApiError:
    return ApiError(404, "not_found", message)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "bad_request", message)


def route_label(request: web.Request) -> str:
    """The route pattern (never the raw path, which carries ids)."""
    route = request.match_info.route
    resource = route.resource
    if resource is None:
        return "unmatched"
    return resource.canonical


# Headers of aiohttp's errors worth keeping (405 must say what is allowed).
_KEPT_HEADERS = ("Allow", "Retry-After", "Content-Range")


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as exc:
        response = error_response(exc.status, exc.code, exc.message, exc.headers)
        if exc.close:
            response.force_close()
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code, message = _STATUS_CODES.get(
            exc.status, ("internal", "internal error") if exc.status >= 500 else
            ("bad_request", "the request was refused")
        )
        headers = {k: exc.headers[k] for k in _KEPT_HEADERS if k in exc.headers}
        return error_response(exc.status, code, message, headers)
    except WriterUnavailable:
        log.error("http_writer_unavailable", route=route_label(request))
        return error_response(503, "unavailable", "the service is stopping or failed")
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        # The class only: an exception's text may carry SQL, paths or URLs.
        log.error("http_unhandled_error", route=route_label(request),
                  error=type(exc).__name__)
        return error_response(500, "internal", "internal error")
