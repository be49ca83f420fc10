"""One error shape for every 4xx/5xx answer: `{"error": {"code", "message"}}`.

Under `/v1/` (OpenAI's speech-to-text API) the same errors take OpenAI's
shape instead, `{"error": {"message", "type", "param", "code"}}`, so the
clients made for it read them (`openai_error_body`).

Handlers raise `ApiError`; aiohttp's own errors (unknown route, wrong method,
body too large) are rewritten into the same shape; anything unexpected
becomes a generic 500. Messages are written here or by the handler, never
taken from an exception's text, so SQL, paths, file names and storage URLs
cannot reach a response. The log line names the route and the error class.

An answer given before the request's body has arrived (`ApiError(close=True)`)
is sent, then the connection is closed after `LINGER_SECONDS` instead of
aiohttp reading and discarding the rest of the body for up to 10 s: a refused
body should give its descriptor back at once. A client that hangs up
mid-body (`ConnectionResetError` from the body's stream) is 499, the status
nginx counts for it, logged at info: nothing failed on this side.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber.core.errors import WriterUnavailable
from transcriber.domain.shapes import ErrorBody, ErrorDetail, to_json
from transcriber.domain.shapes_integrations import OpenAIErrorBody, OpenAIErrorDetail

log = structlog.get_logger(__name__)

# Paths answered in OpenAI's error shape.
OPENAI_PREFIX = "/v1/"
# Our codes that OpenAI's clients know by another name.
_OPENAI_CODES: Mapping[str, str] = {"unauthorized": "invalid_api_key",
                                    "rate_limited": "rate_limit_exceeded"}

# Set on a request whose client holds its body back until `100 Continue` (sent by
# `uploadguard.send_continue` only when the handler is about to read it): an answer
# before that closes the connection, as the body's bytes may still follow.
CONTINUE_OWED = web.RequestKey("continue_owed", bool)

# How long a connection cut mid-body stays open after its answer (`_linger`).
LINGER_SECONDS = 1.0
CLIENT_GONE = 499

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
        param: str | None = None,
        details: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(code)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})
        # Close the connection instead of draining a request body left unread.
        self.close = close
        # OpenAI's shape only: the request field at fault, and fields of our own
        # (the id of a record still being transcribed).
        self.param = param
        self.details = dict(details or {})


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> web.Response:
    body = to_json(ErrorBody(error=ErrorDetail(code=code, message=message)))
    return web.Response(body=body, status=status, content_type="application/json",
                        headers=headers)


def openai_error_body(status: int, code: str, message: str, *, param: str | None = None,
                      record_id: str | None = None) -> OpenAIErrorBody:
    """Pure: an error as OpenAI's API words it (its clients read `type` and `code`)."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return OpenAIErrorBody(error=OpenAIErrorDetail(
        message=message, type=kind, param=param, code=_OPENAI_CODES.get(code, code),
        record_id=record_id))


def answer_for(request: web.BaseRequest, status: int, code: str, message: str, *,
               headers: Mapping[str, str] | None = None, param: str | None = None,
               details: Mapping[str, str] | None = None) -> web.Response:
    """The error in the shape of the request's API (`/v1/`: OpenAI's)."""
    if not request.path.startswith(OPENAI_PREFIX):
        return error_response(status, code, message, headers)
    body = to_json(openai_error_body(status, code, message, param=param,
                                     record_id=(details or {}).get("record_id")))
    return web.Response(body=body, status=status, content_type="application/json",
                        headers=headers)


def api_error_response(request: web.BaseRequest, exc: ApiError) -> web.Response:
    return answer_for(request, exc.status, exc.code, exc.message, headers=exc.headers,
                      param=exc.param, details=exc.details)


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
        response = api_error_response(request, exc)
        if exc.close or request.get(CONTINUE_OWED):
            await close_after(request, response)
        return response
    except ConnectionResetError:
        # aiohttp sets it on the body's stream when the connection is lost.
        log.info("http_client_gone", route=route_label(request), status=CLIENT_GONE)
        response = answer_for(request, CLIENT_GONE, "client_gone", "the connection was closed")
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
        return answer_for(request, exc.status, code, message, headers=headers)
    except WriterUnavailable:
        log.error("http_writer_unavailable", route=route_label(request))
        return answer_for(request, 503, "unavailable", "the service is stopping or failed")
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        # The class only: an exception's text may carry SQL, paths or URLs.
        log.error("http_unhandled_error", route=route_label(request),
                  error=type(exc).__name__)
        return answer_for(request, 500, "internal", "internal error")


async def close_after(request: web.Request, response: web.StreamResponse) -> None:
    """Send `response` and close the connection, without reading the rest of the body."""
    response.force_close()
    if request.content.is_eof():
        return  # nothing more to come: aiohttp closes after the answer
    try:
        await response.prepare(request)
        await response.write_eof()
        await _linger(request)
    except OSError:
        # ConnectionError, or ENOTCONN from shutdown() when the peer has reset the
        # socket between the answer and the EOF: the client is gone, nothing to close.
        return
    # The stream may hold a watchdog's error, which aiohttp would meet (and log
    # with a traceback) draining the rest of the body: it must not drain.
    request.protocol.force_close()


async def _linger(request: web.Request) -> None:
    """The sending side shut after the answer, the connection held `LINGER_SECONDS`.

    A client still sending when it is cut would otherwise be reset: closing a socket
    with unread bytes makes the kernel answer with RST, which can reach the client
    before it has read the answer, and it then sees only "connection reset" (nginx's
    `lingering_close` exists for the same reason)."""
    transport = request.transport
    if transport is not None and transport.can_write_eof():
        transport.write_eof()  # after the answer's bytes: the client reads it, then EOF
        await asyncio.sleep(LINGER_SECONDS)
