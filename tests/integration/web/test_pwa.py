"""The installable app's files (issue 42, item 3): the page links its manifest, the
manifest names icons that are served and a share target that POSTs a file as
`multipart/form-data`, the service worker is served from the root with this
release's shell, and a share that reaches the server (no worker ran) goes to the
upload page without a body read."""

from __future__ import annotations

import re

import aiohttp
import pytest

from tests.helpers.web import Client
from transcriber.web.pwa import SHARE_FIELD, worker_script
from transcriber.web.spa import INDEX, AssetError, build_table, load_table


@pytest.fixture
def engine() -> str:
    """Decided at the door, before any storage: the embedded engine only."""
    return "sqlite"


async def test_the_page_links_its_manifest_and_the_manifest_is_installable(
        client: Client) -> None:
    page = await (await client.get("/")).text()
    [href] = re.findall(r'<link rel="manifest" href="([^"]+)">', page)
    response = await client.get(href)
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/manifest+json"
    manifest = await response.json(content_type=None)
    assert manifest["start_url"] == "/"
    assert manifest["scope"] == "/"
    assert manifest["display"] == "standalone"
    sizes = {icon["sizes"] for icon in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes  # what a phone's installer asks for
    assert any(icon["purpose"] == "maskable" for icon in manifest["icons"])
    for icon in manifest["icons"]:
        served = await client.get(icon["src"])
        assert served.status == 200, icon
        assert served.headers["Content-Type"] == icon["type"]
        if icon["sizes"] != "any":
            body = await served.read()
            width, height = int.from_bytes(body[16:20]), int.from_bytes(body[20:24])
            assert f"{width}x{height}" == icon["sizes"]
    target = manifest["share_target"]
    assert (target["action"], target["method"], target["enctype"]) == (
        "/share", "POST", "multipart/form-data")
    [files] = target["params"]["files"]
    assert files["name"] == SHARE_FIELD == "file"  # the upload door's own field
    assert "audio/*" in files["accept"]


async def test_the_worker_is_served_from_the_root_with_this_release_shell(
        client: Client) -> None:
    response = await client.get("/sw.js")
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert response.headers["Cache-Control"] == "no-cache"
    script = await response.text()
    [version] = re.findall(r'^const VERSION = "([0-9a-f]{16})";$', script, re.MULTILINE)
    assert version
    shell = re.findall(r'"(/assets/[^"]+)"', script.split("const SHELL = ", 1)[1]
                       .split(";", 1)[0])
    table = load_table()
    expected = {f"/assets/{public}" for name, public in table.public_names.items()
                if name not in ("sw.js", INDEX)}
    assert set(shell) == expected
    for path in shell:
        assert (await client.get(path)).status == 200, path


def test_a_worker_without_its_shell_line_is_refused() -> None:
    table = build_table({INDEX: b"<html></html>", "sw.js": b"// @ts-check\nconst X = 1;\n"})
    with pytest.raises(AssetError):
        worker_script(table)


async def test_a_share_no_worker_took_goes_to_the_upload_page(client: Client) -> None:
    form = aiohttp.FormData()
    form.add_field("file", b"x" * 10, filename="memo.m4a")
    response = await client.post("/share", data=form,
                                 allow_redirects=False,
                                 headers={"Origin": str(client.make_url("")).rstrip("/")})
    assert response.status == 303
    assert response.headers["Location"] == "/upload?shared=again"
