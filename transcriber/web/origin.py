"""Hostile pages: requests that a browser sent on behalf of another site.

Two checks, both pure functions with a thin middleware each:

- `Host` must name this service (`[server] allowed_hosts`, plus the loopback
  names and the bound host). A page on `rebind.evil.example` whose name was
  re-pointed at 127.0.0.1 (DNS rebinding) is same-origin with itself, so
  only its `Host` header gives it away: such requests get 421.
- A state-changing request under `/app/` must come from our own pages. The
  web app sends `X-Transcriber-Client: web`; a custom header makes a
  cross-site request need a CORS preflight, which this service never grants,
  so another site cannot send it. Otherwise a browser's own markers decide:
  `Sec-Fetch-Site` other than `same-origin`/`none`, or an `Origin` that is
  not this request's own (scheme, host and port; the scheme a trusted proxy
  reports in `X-Forwarded-Proto`), is refused with 403. A request with neither marker
  (curl, scripts) is no browser's cross-site request and passes. So does a
  request with `Authorization: Bearer …`: no cookie or proxy login is
  involved, and another site's page cannot send that header either (it
  needs the same refused preflight); a bad token is 401 a step later.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Handler

from transcriber.domain.tokens import bearer_credentials
from transcriber.settings import Network, ServerSettings
from transcriber.web import keys
from transcriber.web.addresses import is_trusted, parse_address
from transcriber.web.errors import ApiError
from transcriber.web.ratelimit import API_PREFIX

CLIENT_HEADER = "X-Transcriber-Client"
CLIENT_VALUE = "web"
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
# Liveness probes come from orchestrators by address or container name and
# read nothing of anybody's; everything else (the web app, /metrics) is checked.
HOST_EXEMPT = frozenset({"/healthz", "/readyz"})
_SAME_ORIGIN_SITES = frozenset({"same-origin", "none"})
_SCHEMES = frozenset({"http", "https"})


class AllowedHosts(frozenset[str]):
    """The host names this service answers for (an AppKey needs its own type)."""


ALLOWED_HOSTS = web.AppKey("allowed_hosts", AllowedHosts)


def allowed_hosts(settings: ServerSettings) -> frozenset[str]:
    names = {*LOOPBACK_NAMES, settings.host, *settings.allowed_hosts}
    return frozenset(name.strip().lower().strip("[]") for name in names if name.strip())


def host_name(host_header: str) -> str:
    """The name in a `Host` value, without its port: `[::1]:8080` → `::1`."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def host_allowed(host_header: str | None, allowed: Collection[str]) -> bool:
    """Pure. A request without `Host` (HTTP/1.0 tools) is no browser's."""
    if host_header is None or "*" in allowed:
        return True
    return host_name(host_header) in allowed


def request_scheme(
    *, peer: str | None, transport: str, forwarded_proto: Sequence[str],
    trusted: Sequence[Network],
) -> str:
    """Pure: the scheme the client used to reach us. `X-Forwarded-Proto` counts
    only from a trusted proxy, and only its last value (the one the proxy next
    to us wrote; earlier ones are whatever came in with the request)."""
    if forwarded_proto and is_trusted(parse_address(peer), trusted):
        values = [item.strip().lower() for value in forwarded_proto
                  for item in value.split(",") if item.strip()]
        if values and values[-1] in _SCHEMES:
            return values[-1]
    return transport


def cross_site(
    *, method: str, host_header: str | None, origin: str | None, fetch_site: str | None,
    client: str | None, scheme: str,
) -> str | None:
    """Pure: why a request is refused as cross-site, or None when it may pass.

    `scheme` is the request's own (`request_scheme`): an origin is scheme, host
    and port, so an `https://` page is not the `http://` service on that port."""
    if method not in STATE_CHANGING:
        return None
    if fetch_site is not None and fetch_site.strip().lower() not in _SAME_ORIGIN_SITES:
        return "the browser says this request comes from another site"
    if client == CLIENT_VALUE:
        return None
    if origin is not None:
        parts = urlsplit(origin.strip())
        if origin.strip() == "null" or not parts.netloc:
            return "the request comes from a page without an origin"
        if (host_header is None or parts.netloc.lower() != host_header.strip().lower()
                or parts.scheme.lower() != scheme):
            return "the request comes from another site's page"
    return None


@web.middleware
async def host_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    allowed: AllowedHosts = request.app[ALLOWED_HOSTS]
    if request.path not in HOST_EXEMPT and not host_allowed(request.headers.get("Host"), allowed):
        raise ApiError(421, "unknown_host",
                       "this service does not answer for that host name; "
                       "an operator may add it to server.allowed_hosts")
    return await handler(request)


@web.middleware
async def same_origin_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if (request.path.startswith(API_PREFIX)
            and bearer_credentials(request.headers.getall("Authorization", [])) is None):
        scheme = request_scheme(
            peer=request.remote, transport=request.scheme,
            forwarded_proto=request.headers.getall("X-Forwarded-Proto", []),
            trusted=request.app[keys.SETTINGS].server.trusted_proxies,
        )
        reason = cross_site(
            method=request.method, host_header=request.headers.get("Host"),
            origin=request.headers.get("Origin"),
            fetch_site=request.headers.get("Sec-Fetch-Site"),
            client=request.headers.get(CLIENT_HEADER), scheme=scheme,
        )
        if reason is not None:
            # Close: the body of a refused upload is not worth draining.
            raise ApiError(403, "cross_site", reason, close=True)
    return await handler(request)


def setup_origin_checks(app: web.Application) -> None:
    app[ALLOWED_HOSTS] = AllowedHosts(allowed_hosts(app[keys.SETTINGS].server))
