"""The web app as an installable app on a phone (docs/webapp.md, "On a phone"): its
manifest, its service worker and the share target's door.

- `GET /manifest.webmanifest`: name, icons (the release's hashed names), `display:
  standalone`, and `share_target`: "Share → Transcriber" in a phone's recorder or
  messenger POSTs the file to `/share` as `multipart/form-data`.
- `GET /sw.js`: `assets/sw.js` with the release's shell (every hashed asset) and its
  digest written in; served from the root so its scope is the whole app, never
  cached long (`no-cache`): a new release is a new worker.
- `POST /share`: the service worker answers it in the browser (it uploads the file
  through `POST /app/audiorecords`, the one upload door and its checks). Reaching
  the server means no worker was running: the body is not read, and the person is
  sent to the upload page.
"""

from __future__ import annotations

import hashlib
import re

import orjson
from aiohttp import web

from transcriber.web.spa import ASSETS, INDEX, SECURITY_HEADERS, AssetError, AssetTable

WORKER = "sw.js"
MANIFEST_PATH = "/manifest.webmanifest"
WORKER_PATH = "/sw.js"
SHARE_PATH = "/share"
SHARE_FIELD = "file"
THEME = "#2451a6"
# What a phone offers to share with the app: recordings (and voice notes in video
# containers); the upload door's probe still decides.
SHARE_ACCEPTS = ["audio/*", "video/webm", "video/mp4", "video/3gpp", ".mp3", ".m4a", ".ogg",
                 ".opus", ".oga", ".wav", ".flac", ".webm", ".amr", ".3gp", ".aac"]

_VERSION_RE = re.compile(r'^const VERSION = "dev";$', re.MULTILINE)
_SHELL_RE = re.compile(r"^const SHELL = \[\];$", re.MULTILINE)


def manifest(table: AssetTable) -> dict[str, object]:
    """Pure: the web app manifest of this release."""
    names = table.public_names

    def icon(name: str, sizes: str, kind: str, purpose: str = "any") -> dict[str, str]:
        return {"src": f"/assets/{names[name]}", "sizes": sizes, "type": kind,
                "purpose": purpose}

    return {
        "id": "/", "name": "Transcriber", "short_name": "Transcriber",
        "description": "Your recordings and their transcripts",
        "start_url": "/", "scope": "/", "display": "standalone",
        "background_color": "#ffffff", "theme_color": THEME,
        "icons": [icon("icon.svg", "any", "image/svg+xml"),
                  icon("icon-192.png", "192x192", "image/png"),
                  icon("icon-512.png", "512x512", "image/png"),
                  icon("icon-maskable.png", "512x512", "image/png", "maskable")],
        "share_target": {
            "action": SHARE_PATH, "method": "POST", "enctype": "multipart/form-data",
            "params": {"title": "title", "text": "text",
                       "files": [{"name": SHARE_FIELD, "accept": SHARE_ACCEPTS}]},
        },
    }


def worker_script(table: AssetTable) -> bytes:
    """Pure: `sw.js` with this release's shell and version written in."""
    source_name = table.public_names.get(WORKER)
    if source_name is None:
        raise AssetError(f"{WORKER} is missing")
    shell = sorted(f"/assets/{public}" for name, public in table.public_names.items()
                   if name not in (WORKER, INDEX))
    version = hashlib.sha256("\n".join(shell).encode()).hexdigest()[:16]
    text = table.assets[source_name].body.decode()
    if not _VERSION_RE.search(text) or not _SHELL_RE.search(text):
        raise AssetError(f"{WORKER} lacks its VERSION or SHELL line")
    text = _VERSION_RE.sub(f'const VERSION = "{version}";', text, count=1)
    text = _SHELL_RE.sub(lambda _: f"const SHELL = {orjson.dumps(shell).decode()};", text,
                         count=1)
    return text.encode()


PWA = web.AppKey("pwa_files", tuple)  # (manifest bytes, worker bytes)


async def manifest_file(request: web.Request) -> web.Response:
    return web.Response(body=request.app[PWA][0], headers={
        "Content-Type": "application/manifest+json", "Cache-Control": "no-cache",
        **SECURITY_HEADERS})


async def worker_file(request: web.Request) -> web.Response:
    return web.Response(body=request.app[PWA][1], headers={
        "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-cache",
        **SECURITY_HEADERS})


async def share(request: web.Request) -> web.Response:
    """No service worker took the share: to the upload page (the body is not read)."""
    raise web.HTTPSeeOther("/upload?shared=again", headers={"Connection": "close"})


def setup_pwa(app: web.Application) -> None:
    """After `setup_spa` (it reads the asset table)."""
    table = app[ASSETS]
    app[PWA] = (orjson.dumps(manifest(table)), worker_script(table))
    app.router.add_get(MANIFEST_PATH, manifest_file)
    app.router.add_get(WORKER_PATH, worker_file)
    app.router.add_post(SHARE_PATH, share)
