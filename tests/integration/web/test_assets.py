"""The web app's serving: index.html, content-hashed assets, cache headers, CSP, routes."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

import pytest

from tests.helpers.web import Client, StartApi
from transcriber.core.ids import new_id
from transcriber.web.spa import (
    ASSETS_DIR,
    CLIENT_ROUTES,
    HASH_CHARS,
    AssetError,
    build_table,
    hashed_name,
)


@pytest.fixture
def engine() -> str:
    """What this module checks is decided at the door, before any storage: it runs on
    the embedded engine only (the API tests that read or write records run on both)."""
    return "sqlite"

HASHED_REF = re.compile(r"/assets/([\w-]+)\.([0-9a-f]{16})\.(\w+)")
MODULE_IMPORT = re.compile(r"""(?:from|import)\s*\(?\s*["']\./([^"']+)["']""")


async def _index(client: Client, path: str = "/") -> str:
    response = await client.get(path)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    assert response.headers["Cache-Control"] == "no-cache"
    return await response.text()


def _assert_csp(headers: Mapping[str, str]) -> None:
    csp = headers.get("Content-Security-Policy", "")
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"  # no 'unsafe-inline', no hashes
    assert directives["object-src"] == "'none'"
    assert "unsafe" not in csp
    assert headers.get("X-Content-Type-Options") == "nosniff"


async def test_index_refers_to_hashed_assets_that_are_served_immutable(client: Client) -> None:
    html = await _index(client)
    refs = HASHED_REF.findall(html)
    assert {f"{stem}.{ext}" for stem, _, ext in refs} == {"app.js", "app.css", "icon.svg",
                                                           "icon-192.png"}
    for stem, digest, ext in refs:
        response = await client.get(f"/assets/{stem}.{digest}.{ext}")
        assert response.status == 200
        body = await response.read()
        # The name carries the hash of exactly the bytes served under it.
        assert hashlib.sha256(body).hexdigest()[:HASH_CHARS] == digest
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        _assert_csp(response.headers)
        assert response.headers["Content-Type"] == {
            "js": "text/javascript; charset=utf-8",
            "css": "text/css; charset=utf-8",
            "svg": "image/svg+xml",
            "png": "image/png",
        }[ext]


async def test_every_module_import_is_a_served_hashed_module(client: Client) -> None:
    html = await _index(client)
    entry = next(m.group(0) for m in HASHED_REF.finditer(html) if m.group(3) == "js")
    seen: set[str] = set()
    pending = [entry.removeprefix("/assets/")]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        response = await client.get(f"/assets/{name}")
        assert response.status == 200, name
        text = await response.text()
        for imported in MODULE_IMPORT.findall(text):
            assert HASHED_REF.fullmatch(f"/assets/{imported}"), (name, imported)
            pending.append(imported)
    # Every module but the service worker, which the browser loads from /sw.js (test_pwa).
    sources = {p.name for p in ASSETS_DIR.glob("*.js")} - {"sw.js"}
    assert {re.sub(r"\.[0-9a-f]{16}\.", ".", n) for n in seen} == sources


async def test_index_has_no_inline_script_or_style(client: Client) -> None:
    response = await client.get("/")
    _assert_csp(response.headers)
    html = await response.text()
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.DOTALL)
    assert scripts, "the app is loaded by a script"
    assert all(body.strip() == "" for body in scripts)
    assert all("src=" in tag for tag in re.findall(r"<script\b[^>]*>", html))
    assert "<style" not in html
    assert " style=" not in html
    assert not re.search(r"\son[a-z]+=", html), "inline event handlers"
    assert not re.search(r"https?://", html), "no external fonts or CDNs"


def test_no_asset_parses_strings_as_html_or_loads_from_elsewhere() -> None:
    for path in ASSETS_DIR.iterdir():
        if path.suffix == ".png":  # the phone app's icons: pictures, not text
            continue
        text = path.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in text, f"{path.name} uses {sink}"
        if path.suffix in {".js", ".css"}:
            assert not re.search(r"https?://|@import|url\(", text), path.name


# A fixed id for the fresh record id: pytest-xdist's workers must collect the same names.
@pytest.mark.parametrize("path", ["/upload", pytest.param(f"/records/{new_id()}",
                                                          id="/records/<new id>"),
                                  "/records/anything"])
async def test_client_routes_answer_with_the_index(client: Client, path: str) -> None:
    assert await _index(client, path) == await _index(client, "/")


async def test_client_routes_match_the_browser_router() -> None:
    router = (ASSETS_DIR / "app.js").read_text()
    patterns = re.findall(r"pattern: /\^(.*?)\$/", router)
    assert [p.replace("\\/", "/").replace("([^/]+)", "{id}") for p in patterns] == list(
        CLIENT_ROUTES)


@pytest.mark.parametrize("path", [
    "/assets/app.js",  # the unhashed source name is not served
    "/assets/app.0000000000000000.js",  # a hash of no release
    "/assets/nothing.css",
    "/assets/",
    "/assets/..%2Fspa.py",
    "/favicon.ico",
    "/records/a/b",
    "/upload/more",
])
async def test_unknown_paths_are_404_in_the_error_shape(client: Client, path: str) -> None:
    response = await client.get(path)
    assert response.status == 404
    assert response.headers["Content-Type"].startswith("application/json")
    body = await response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == "not_found"
    assert isinstance(body["error"]["message"], str)


async def test_the_app_does_not_shadow_the_api_or_operator_routes(client: Client) -> None:
    me = await client.get("/app/me")
    assert me.status == 200
    assert (await me.json())["login"] == "local"
    listing = await client.get("/app/audiorecords")
    assert (await listing.json()) == {"items": [], "next_cursor": None}
    missing = await client.get("/app/nothing")
    assert missing.status == 404
    assert (await missing.json())["error"]["code"] == "not_found"
    card = await client.get(f"/app/audiorecords/{new_id()}")
    assert (await card.json())["error"]["message"] == "no such record"
    metrics = await client.get("/metrics")
    assert metrics.status == 200
    assert "transcriber_http_requests_total" in await metrics.text()
    assert (await (await client.get("/healthz")).json()) == {"status": "ok"}
    assert (await (await client.get("/readyz")).json()) == {"status": "ready"}
    openapi = await client.get("/app/openapi.json")
    assert openapi.headers["Content-Type"].startswith("application/json")


async def test_the_app_needs_no_identity_but_the_api_does(start_api: StartApi) -> None:
    client = await start_api(server={"anonymous_user": ""})
    assert (await client.get("/")).status == 200
    assert (await client.get("/records/x")).status == 200
    assert (await client.get("/app/me")).status == 401


async def test_asset_routes_are_labelled_by_pattern_in_metrics(client: Client) -> None:
    html = await _index(client)
    css = next(m.group(0) for m in HASHED_REF.finditer(html) if m.group(3) == "css")
    await client.get(css)
    text = await (await client.get("/metrics")).text()
    assert 'route="/assets/{name}"' in text
    assert css not in text


def test_a_dependency_change_renames_its_importers() -> None:
    sources = {
        "index.html": b'<script type="module" src="/assets/app.js"></script>',
        "app.js": b'import { x } from "./lib.js";\n',
        "lib.js": b"export const x = 1;\n",
    }
    first = build_table(sources)
    second = build_table({**sources, "lib.js": b"export const x = 2;\n"})
    assert first.public_names["lib.js"] != second.public_names["lib.js"]
    # app.js itself did not change, yet its name does: it imports the new name.
    assert first.public_names["app.js"] != second.public_names["app.js"]
    app = second.assets[second.public_names["app.js"]].body.decode()
    assert f'from "./{second.public_names["lib.js"]}"' in app
    assert second.public_names["app.js"].encode() in second.index_html
    assert hashed_name("app.js", b"x") == f"app.{hashlib.sha256(b'x').hexdigest()[:16]}.js"


@pytest.mark.parametrize(("sources", "problem"), [
    ({"app.js": b""}, "index.html is missing"),
    ({"index.html": b'<link href="/assets/gone.css">'}, "missing asset gone.css"),
    ({"index.html": b"", "a.js": b'import "./b.js";', "b.js": b'import "./a.js";'}, "cycle"),
    ({"index.html": b"", "a.js": b'export * from "./nope.js";'}, "missing modules"),
    ({"index.html": b"", "notes.txt": b""}, "unknown file type"),
])
def test_an_inconsistent_assets_folder_stops_the_start(
    sources: dict[str, bytes], problem: str,
) -> None:
    with pytest.raises(AssetError, match=problem):
        build_table(sources)
