"""Private answers are never stored by a cache: every answer under `/app/` and `/v1/`
(JSON, transcript downloads, audio, errors) carries `Cache-Control: no-store`
and `Vary` on the headers that say who is asking.

One place for all of them: a response-prepare hook sees every answer, the ones
a handler streams itself (audio) and the error middleware's included, so a
new route cannot forget it. A shared cache (a proxy, a CDN) that kept one
person's card or audio could hand it to the next person behind it; a
browser's own disk cache would keep it after sign-out. Public answers keep
their caching: the API's description (`ratelimit.PUBLIC_PATHS`), the web
app's page and its hashed assets (`web.spa`), health and metrics.
"""

from __future__ import annotations

from aiohttp import web

from transcriber.web.errors import OPENAI_PREFIX
from transcriber.web.identity import LOGIN_HEADER
from transcriber.web.ratelimit import API_PREFIX, PUBLIC_PATHS

NO_STORE = "no-store"
# Who is asking: a bearer token, a cookie the proxy signs people in with, the
# proxy's login header.
IDENTITY_VARY = ("Authorization", "Cookie", LOGIN_HEADER)


def private_path(path: str) -> bool:
    return path.startswith((API_PREFIX, OPENAI_PREFIX)) and path not in PUBLIC_PATHS


def vary_with(existing: str, names: tuple[str, ...]) -> str:
    """Pure: `existing` Vary value with `names` added once each (case-insensitively)."""
    present = [item.strip() for item in existing.split(",") if item.strip()]
    if "*" in present:
        return "*"
    seen = {item.lower() for item in present}
    present += [name for name in names if name.lower() not in seen]
    return ", ".join(present)


async def mark_private(request: web.Request, response: web.StreamResponse) -> None:
    if not private_path(request.path):
        return
    response.headers["Cache-Control"] = NO_STORE
    response.headers["Vary"] = vary_with(response.headers.get("Vary", ""), IDENTITY_VARY)


def setup_private(app: web.Application) -> None:
    app.on_response_prepare.append(mark_private)
