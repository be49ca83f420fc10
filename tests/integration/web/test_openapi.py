"""The OpenAPI document: it describes every route, and real responses match it."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import Any

import aiohttp
import jsonschema
import orjson
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.helpers.followups import webhook_worker
from tests.helpers.pipeline import until
from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import SPEECH, Client, StartApi, advance, halt, transcribe, upload
from transcriber.domain.quality import assess
from transcriber.ports import Span, Word
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import NOT_AUDIO_MARKER
from transcriber.testing.webhooks import FakeWebhookTransport
from transcriber.web import keys
from transcriber.web.openai_wait import LOOK_SECONDS
from transcriber.web.operations import ref

DOC_URI = "urn:transcriber:openapi"


async def _document(client: Client) -> dict[str, Any]:
    response = await client.get("/app/openapi.json")
    assert response.status == 200
    document = await response.json()
    assert isinstance(document, dict)
    return document


class Checker:
    """Validates responses against the document's response schemas."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        resource = Resource.from_contents(document, default_specification=DRAFT202012)
        self.registry: Registry[Any] = Registry().with_resource(DOC_URI, resource)
        self.checked: set[tuple[str, str, int]] = set()

    def _operation(self, method: str, path: str) -> tuple[str, dict[str, Any]]:
        for template, item in self.document["paths"].items():
            pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
            if re.match(pattern, path) and method.lower() in item:
                return template, item[method.lower()]
        raise AssertionError(f"{method} {path} is not in the document")

    async def check(self, response: Any, method: str, path: str) -> None:
        template, operation = self._operation(method, path.split("?", maxsplit=1)[0])
        status = response.status
        spec = operation["responses"].get(str(status))
        assert spec is not None, f"{method} {template}: status {status} is not documented"
        content_type = response.headers.get("Content-Type", "").split(";")[0]
        if "content" not in spec:
            self.checked.add((method.upper(), template, status))
            return
        media = spec["content"].get(content_type) or spec["content"].get(
            content_type.split("/")[0] + "/*")
        assert media is not None, f"{method} {template} {status}: {content_type} undocumented"
        if content_type == "application/json":
            schema = _rebase(media["schema"])
            jsonschema.Draft202012Validator(schema, registry=self.registry).validate(
                await response.json())
        self.checked.add((method.upper(), template, status))



def _rebase(schema: Any) -> Any:
    """The schema with its `$ref`s pointing into the registered document."""
    if isinstance(schema, dict):
        return {k: (DOC_URI + v if k == "$ref" else _rebase(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_rebase(v) for v in schema]
    return schema


async def test_document_is_valid_and_covers_every_api_route(client: Client) -> None:
    document = await _document(client)
    assert document["openapi"].startswith("3.1")
    jsonschema.Draft202012Validator.check_schema(
        {"$defs": document["components"]["schemas"]})
    routes = {
        (route.method, route.resource.canonical)
        for route in client.app.router.routes()
        if route.resource is not None
        and route.resource.canonical.startswith(("/app/", "/v1/"))
        and route.method != "HEAD"
    }
    # HEAD: aiohttp adds one to every GET; a HEAD of its own (tus's) is documented too.
    documented = {(m.upper(), p) for p, item in document["paths"].items() for m in item
                  if m != "head"}
    assert routes == documented
    assert document["paths"]["/app/audiorecords"]["get"]["parameters"][0]["schema"][
        "maximum"] == 100


# With words and a quality report: the card's, the JSON export's and verbose_json's parts.
WORDED = [dataclasses.replace(SPEECH[0], words=(
    Word(start_ms=0, end_ms=900, text=" Hello", probability=0.2),
    Word(start_ms=900, end_ms=1830, text=" there", probability=None))), *SPEECH[1:]]
REPORT = assess(WORDED, speech=None, unclear=[Span(start_ms=6000, end_ms=9000)],
                repeats_removed=1)


async def test_real_responses_match_the_document(start_api: StartApi) -> None:
    client = await start_api(server={"upload_max_bytes": 10_000})
    checker = Checker(await _document(client))

    async def call(method: str, path: str, **kwargs: Any) -> Any:
        response = await client.request(method, path, **kwargs)
        await checker.check(response, method, path)
        return response

    await call("GET", "/app/me")
    raw = {"X-Filename": "a.wav", "Content-Type": "application/octet-stream"}
    created = await (await call("POST", "/app/audiorecords", data=b"audio", headers=raw)).json()
    await call("POST", "/app/audiorecords", data=b"", headers=raw)
    await call("POST", "/app/audiorecords", data=b"x" * 20_000, headers=raw)
    await call("POST", "/app/audiorecords", data=NOT_AUDIO_MARKER, headers=raw)
    record_id = created["id"]
    await call("GET", "/app/audiorecords")
    await call("GET", "/app/audiorecords?limit=0")
    await call("GET", "/app/audiorecords?q=audio")
    await call("GET", f"/app/audiorecords/{record_id}")
    await call("GET", "/app/audiorecords/nope")
    await call("GET", f"/app/audiorecords/{record_id}/file")
    await call("GET", f"/app/audiorecords/{record_id}/file", headers={"Range": "bytes=0-1"})
    await call("GET", f"/app/audiorecords/{record_id}/file", headers={"Range": "bytes=99-"})
    await call("GET", f"/app/audiorecords/{record_id}/file?copy=normalized")
    await call("GET", f"/app/audiorecords/{record_id}/file?copy=bad")
    await call("GET", f"/app/audiorecords/{record_id}/transcript")
    await call("POST", f"/app/audiorecords/{record_id}/resume")
    await transcribe(client, record_id, WORDED, quality=REPORT)
    for fmt in ("txt", "srt", "vtt", "json", "md", "docx"):
        await call("GET", f"/app/audiorecords/{record_id}/transcript?format={fmt}")
    await call("GET", f"/app/audiorecords/{record_id}/transcript?format=doc")
    await advance(client, record_id)  # done
    await call("GET", f"/app/audiorecords/{record_id}")
    other = await upload(client)
    await halt(client, str(other["id"]), "ffmpeg said no")
    await call("GET", f"/app/audiorecords/{other['id']}")
    await call("GET", "/app/audiorecords")
    await call("POST", f"/app/audiorecords/{other['id']}/resume")
    await call("GET", "/app/openapi.json")
    # The archive's edits.
    await call("PATCH", f"/app/audiorecords/{record_id}", json={"title": "t", "topics": ["a"]})
    await call("PATCH", f"/app/audiorecords/{record_id}", json={"color": "red"})
    await call("PATCH", f"/app/audiorecords/{record_id}", data=b"x")
    await call("PATCH", "/app/audiorecords/nope", json={"title": "t"})
    await call("GET", "/app/topics")
    await call("GET", "/app/audiorecords?topic=a")
    await call("GET", f"/app/audiorecords/{record_id}/transcript?version=original")
    await call("GET", f"/app/audiorecords/{record_id}/transcript?version=draft")
    revision = (await (await client.get(f"/app/audiorecords/{record_id}")).json())["revision"]
    await call("PATCH", f"/app/audiorecords/{record_id}/transcript",
               json={"revision": revision, "utterances": [{"index": 0, "text": "x"}]})
    await call("PATCH", f"/app/audiorecords/{record_id}/transcript",
               json={"revision": revision, "utterances": [{"index": 0, "text": "y"}]})
    await call("PATCH", f"/app/audiorecords/{record_id}/transcript", json={"revision": 0})
    await call("POST", f"/app/audiorecords/{record_id}/retranscribe?language=xx")
    await call("POST", f"/app/audiorecords/{record_id}/retranscribe", json={"language": "en"})
    await call("POST", f"/app/audiorecords/{record_id}/retranscribe")
    await call("POST", "/app/audiorecords?language=xx", data=b"audio", headers=raw)
    await call("DELETE", f"/app/audiorecords/{other['id']}")
    await call("DELETE", f"/app/audiorecords/{other['id']}")
    statuses = {status for _, _, status in checker.checked}
    assert statuses == {200, 201, 204, 206, 400, 404, 409, 413, 415, 416}


async def test_401_and_429_match_the_document(start_api: StartApi) -> None:
    client = await start_api(server={"anonymous_user": "", "rate_limit_requests": 2})
    checker = Checker(await _document(client))
    for _ in range(2):
        response = await client.get("/app/audiorecords")
        await checker.check(response, "GET", "/app/audiorecords")
    assert {s for _, _, s in checker.checked} == {401, 429}


@pytest.mark.parametrize("path", ["/app/me", "/app/audiorecords"])
async def test_documented_limits_follow_settings(start_api: StartApi, path: str) -> None:
    client = await start_api(server={"page_max": 50, "page_default": 10})
    document = await _document(client)
    limit = document["paths"]["/app/audiorecords"]["get"]["parameters"][0]["schema"]
    assert (limit["maximum"], limit["default"]) == (50, 10)
    assert (await client.get(path)).status == 200


async def test_webhook_routes_and_the_payload_match_the_document(start_api: StartApi) -> None:
    transport = FakeWebhookTransport(names={"hooks.example.net": ["93.184.216.34"]})
    client = await start_api(webhook_transport=transport, webhooks={"per_user_max": 1})
    checker = Checker(await _document(client))

    async def call(method: str, path: str, **kwargs: Any) -> Any:
        response = await client.request(method, path, **kwargs)
        await checker.check(response, method, path)
        return response

    new = {"url": "https://hooks.example.net/in", "events": ["record.halted", "record.deleted"]}
    webhook = await (await call("POST", "/app/webhooks", json=new)).json()
    await call("POST", "/app/webhooks", json=new)  # 409: one each
    await call("POST", "/app/webhooks", json={**new, "url": "http://127.0.0.1/"})
    await call("GET", "/app/webhooks")
    record = str((await upload(client))["id"])
    await halt(client, record)
    await call("DELETE", f"/app/audiorecords/{record}")
    await call("GET", f"/app/webhooks/{webhook['id']}/deliveries")
    webhook_worker(client.app).wake()
    await until(lambda: len(transport.posts) == 2)
    payload_schema = _rebase(ref("WebhookPayload"))
    for posted in transport.posts:
        jsonschema.Draft202012Validator(payload_schema, registry=checker.registry).validate(
            orjson.loads(posted.body))
    await call("GET", f"/app/webhooks/{webhook['id']}/deliveries")
    await call("DELETE", f"/app/webhooks/{webhook['id']}")
    await call("DELETE", f"/app/webhooks/{webhook['id']}")
    await call("GET", f"/app/webhooks/{webhook['id']}/deliveries")
    assert {s for _, p, s in checker.checked if "webhooks" in p} == {200, 201, 204, 400, 404,
                                                                      409}


def _form(content: bytes = b"audio", fields: dict[str, str] | None = None) -> aiohttp.FormData:
    form = aiohttp.FormData()
    for name, value in (fields or {}).items():
        form.add_field(name, value)
    form.add_field("file", content, filename="talk.wav")
    return form


async def test_token_and_openai_responses_match_the_document(
    start_api: StartApi, clock: FakeClock,
) -> None:
    client = await start_api(server={"openai_wait_seconds": 4.0})
    checker = Checker(await _document(client))

    async def call(method: str, path: str, **kwargs: Any) -> Any:
        response = await client.request(method, path, **kwargs)
        await checker.check(response, method, path)
        return response

    made = await (await call("POST", "/app/tokens", json={"name": "n8n"})).json()
    await call("POST", "/app/tokens", json={"scope": "root"})
    await call("GET", "/app/tokens")
    writer, reader = bearer(made["token"]), bearer(await make_token(client.app, scope="read"))
    await call("GET", "/app/tokens", headers=writer)
    await call("POST", "/app/tokens", json={}, headers=writer)
    await call("GET", "/app/me", headers=bearer("tx_" + "A" * 43))
    await call("DELETE", "/app/tokens/nope")
    await call("GET", "/v1/models", headers=writer)
    await call("GET", "/v1/models")
    await call("GET", "/v1/models/fake", headers=writer)
    await call("POST", "/v1/audio/transcriptions", data=_form(), headers=reader)
    await call("POST", "/v1/audio/transcriptions", data=_form(NOT_AUDIO_MARKER),
               headers=writer)
    await call("POST", "/v1/audio/transcriptions", data=_form(fields={"language": "xx"}),
               headers=writer)
    # Past the wait (the fake clock's): 504 with the record's id.
    waiting = asyncio.ensure_future(call("POST", "/v1/audio/transcriptions", data=_form(),
                                         headers=writer))
    while not waiting.done():
        await asyncio.sleep(0.02)
        clock.advance(LOOK_SECONDS)
    record_id = (await (await waiting).json())["error"]["record_id"]
    await client.delete(f"/app/audiorecords/{record_id}")  # out of the claims below
    # Done while a request waits: the transcript in each format.
    for fmt in ("json", "verbose_json", "diarized_json", "text"):
        waiting = asyncio.ensure_future(call(
            "POST", "/v1/audio/transcriptions", headers=writer,
            data=_form(fields={"response_format": fmt, "timestamp_granularities[]": "word"})))
        listed: list[Any] = []
        while not listed:
            await asyncio.sleep(0.02)
            listed = (await (await client.get("/app/audiorecords", headers=writer)).json())[
                "items"]
        newest = listed[0]["id"]
        await transcribe(client, newest, WORDED, quality=REPORT)
        await advance(client, newest)
        client.app[keys.SETTLED].settled(newest)
        assert (await waiting).status == 200
        await client.delete(f"/app/audiorecords/{newest}")
    # A record that halts while its request waits.
    waiting = asyncio.ensure_future(call("POST", "/v1/audio/transcriptions", data=_form(),
                                         headers=writer))
    listed = []
    while not listed:
        await asyncio.sleep(0.02)
        listed = (await (await client.get("/app/audiorecords", headers=writer)).json())[
            "items"]
    await halt(client, listed[0]["id"])
    client.app[keys.SETTLED].settled(listed[0]["id"])
    assert (await waiting).status == 500
    await call("DELETE", f"/app/tokens/{made['id']}")
    statuses = {(template, status) for _, template, status in checker.checked}
    assert {status for _, status in statuses} >= {200, 201, 204, 400, 401, 403, 404, 415,
                                                  500, 504}
    assert {template for template, _ in statuses} == {
        "/app/tokens", "/app/tokens/{id}", "/app/me", "/v1/models", "/v1/models/{model}",
        "/v1/audio/transcriptions"}
