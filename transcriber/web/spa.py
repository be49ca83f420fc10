"""The web app: `index.html` and its content-hashed assets, served by the same process.

At start every file in `assets/` is read once and given a public name with a
hash of its served bytes (`app.js` → `app.<hash>.js`), so a browser may keep
it for a year (`immutable`) and a new release is fetched at once. The
modules' relative imports (`from "./api.js"`) and the page's `/assets/...`
references are rewritten to the hashed names first, so a file's hash covers
the names of what it loads. `index.html` itself is never cached: it is the
one place that points at the current release.

The SPA's own routes (the record list, upload, settings, API tokens, voices, a record
card) answer with
`index.html`; they are listed explicitly so nothing else is shadowed and an
unknown path is still the API's JSON 404.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from aiohttp import web

from transcriber.web.errors import ApiError

ASSETS_DIR = Path(__file__).with_name("assets")
INDEX = "index.html"
HASH_CHARS = 16
# Paths the browser-side router knows (see assets/app.js).
CLIENT_ROUTES = ("/", "/upload", "/settings", "/tokens", "/records/{id}", "/voices", "/ask")

CONTENT_TYPES: Mapping[str, str] = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".html": "text/html; charset=utf-8",
}
IMMUTABLE = "public, max-age=31536000, immutable"
# Everything from this origin only; no inline script or style, no plugins,
# no framing. The API's audio and JSON are same-origin.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "media-src 'self'; connect-src 'self'; font-src 'self'; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}

# `from "./api.js"` / `import "./x.js"` in modules; `"/assets/app.css"` in the page.
_IMPORT_RE = re.compile(r"""(\bfrom\s*|\bimport\s*\(?\s*)(["'])\./([\w-]+\.js)\2""")
_PAGE_REF_RE = re.compile(r"""(["'])/assets/([\w-]+\.\w+)\1""")


class AssetError(RuntimeError):
    """The assets folder is inconsistent (a missing import, a cycle, an unknown type)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Asset:
    public_name: str
    body: bytes
    content_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AssetTable:
    index_html: bytes
    # Public (hashed) name → asset.
    assets: Mapping[str, Asset]
    # Source name → public name.
    public_names: Mapping[str, str]


def hashed_name(name: str, body: bytes) -> str:
    stem, dot, ext = name.rpartition(".")
    digest = hashlib.sha256(body).hexdigest()[:HASH_CHARS]
    return f"{stem}.{digest}.{ext}" if dot else f"{name}.{digest}"


def _imports(text: str) -> set[str]:
    return {match.group(3) for match in _IMPORT_RE.finditer(text)}


def build_table(sources: Mapping[str, bytes]) -> AssetTable:
    """Pure: source files by name → the served table with hashed names."""
    if INDEX not in sources:
        raise AssetError(f"{INDEX} is missing")
    for name in sources:
        if Path(name).suffix not in CONTENT_TYPES:
            raise AssetError(f"{name}: unknown file type")
    modules = {n: b.decode() for n, b in sources.items() if n.endswith(".js")}
    graph = {name: _imports(text) for name, text in modules.items()}
    for name, deps in graph.items():
        missing = deps - modules.keys()
        if missing:
            raise AssetError(f"{name} imports missing modules {sorted(missing)}")
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        raise AssetError(f"modules import each other in a cycle: {exc.args[1]}") from None
    public: dict[str, str] = {}
    assets: dict[str, Asset] = {}

    def add(name: str, body: bytes) -> None:
        public[name] = hashed_name(name, body)
        assets[public[name]] = Asset(public_name=public[name], body=body,
                                     content_type=CONTENT_TYPES[Path(name).suffix])

    # Dependencies first, so each module is rewritten to names already known.
    for name in order:
        text = _IMPORT_RE.sub(
            lambda m: f"{m.group(1)}{m.group(2)}./{public[m.group(3)]}{m.group(2)}",
            modules[name],
        )
        add(name, text.encode())
    for name, body in sources.items():
        if name != INDEX and name not in public:
            add(name, body)

    def page_ref(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in public:
            raise AssetError(f"{INDEX} refers to a missing asset {name}")
        return f"{match.group(1)}/assets/{public[name]}{match.group(1)}"

    index = _PAGE_REF_RE.sub(page_ref, sources[INDEX].decode()).encode()
    return AssetTable(index_html=index, assets=assets, public_names=public)


def load_table(folder: Path = ASSETS_DIR) -> AssetTable:
    sources = tuple((p.name, p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file())
    return _table_of(sources)


@functools.lru_cache(maxsize=1)
def _table_of(sources: tuple[tuple[str, bytes], ...]) -> AssetTable:
    """The table of exactly these files, built once while they stay the same: a
    process that builds many apps (the tests build one per test) scans and hashes
    the modules once, not 30 ms each time. Keyed on the files' bytes, so an edited
    file is a new table."""
    return build_table(dict(sources))


ASSETS = web.AppKey("spa_assets", AssetTable)


async def index(request: web.Request) -> web.Response:
    return web.Response(body=request.app[ASSETS].index_html, headers={
        "Content-Type": CONTENT_TYPES[".html"],
        "Cache-Control": "no-cache",
        **SECURITY_HEADERS,
    })


async def asset(request: web.Request) -> web.Response:
    found = request.app[ASSETS].assets.get(request.match_info["name"])
    if found is None:
        raise ApiError(404, "not_found", "no such asset")
    return web.Response(body=found.body, headers={
        "Content-Type": found.content_type,
        "Cache-Control": IMMUTABLE,
        **SECURITY_HEADERS,
    })


def setup_spa(app: web.Application, table: AssetTable | None = None) -> None:
    app[ASSETS] = table or load_table()
    for path in CLIENT_ROUTES:
        app.router.add_get(path, index)
    app.router.add_get("/assets/{name}", asset)
