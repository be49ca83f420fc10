"""Links for people outside over real HTTP, on both engines: made by the owner, opened
with no identity, TXT/SRT/audio through the link, revoked or expired → the 404 of a
link that never existed, and nothing else reachable with one."""

from __future__ import annotations

import hashlib
import ipaddress
import re
from typing import Any

import structlog
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.helpers.database import TestDatabase
from tests.helpers.pipeline import sample
from tests.helpers.tokens import bearer, make_token
from tests.helpers.web import Client, StartApi, transcribe, upload
from transcriber.db.commands.links import CountOpening, RevokeLink
from transcriber.ports import Utterance
from transcriber.testing.clock import FakeClock
from transcriber.web import keys

AUDIO = b"RIFF....WAVEfmt fake audio bytes for the link"
TALK = (
    Utterance(start_ms=0, end_ms=1500, channel=0, speaker="S1", text="Привет, <b>мир</b>."),
    Utterance(start_ms=65_000, end_ms=67_000, channel=1, speaker="S2",
              text="Second speaker here."),
)
# No trusted proxy and no anonymous user: a request without a token has no identity.
DOC_URI = "urn:transcriber:openapi"
NOBODY = {"trusted_proxies": (ipaddress.ip_network("10.0.0.0/8"),), "anonymous_user": ""}


async def _record(client: Client, *, who: str = "alice") -> str:
    created = await upload(client, content=AUDIO, name="secret-name.wav",
                           headers={"Remote-User": who})
    record_id = str(created["id"])
    await transcribe(client, record_id, TALK)
    named = await client.patch(f"/app/audiorecords/{record_id}", json={
        "title": "Планёрка", "speakers": {"S1": "Anna"}}, headers={"Remote-User": who})
    assert named.status == 200, await named.text()
    return record_id


async def _link(client: Client, record_id: str, *, who: str = "alice",
                **body: object) -> dict[str, object]:
    response = await client.post(f"/app/audiorecords/{record_id}/links", json=body,
                                 headers={"Remote-User": who})
    assert response.status == 201, await response.text()
    made = await response.json()
    assert isinstance(made, dict)
    return made


def _public_headers_hold(response: object) -> None:
    headers = response.headers  # type: ignore[attr-defined]
    assert headers["X-Robots-Tag"].startswith("noindex")
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["Cache-Control"] == "no-store"
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert "script-src" not in headers["Content-Security-Policy"]


async def test_made_by_the_owner_opened_by_anyone_and_counted(
    client: Client, database: TestDatabase,
) -> None:
    record_id = await _record(client)
    made = await _link(client, record_id, expires_in_days=3, audio=True)
    url = str(made["url"])
    assert re.fullmatch(r"/s/[A-Za-z0-9_-]{32}", url)
    assert made["expires_at"] == "2026-01-04T00:00:00Z"  # the fake clock's day + 3
    assert (made["audio"], made["views"], made["last_opened_at"]) == (True, 0, None)
    # Only the hash is stored.
    secret = url.removeprefix("/s/")
    assert database.rows("SELECT secret_hash FROM record_links") == [
        (hashlib.sha256(secret.encode()).hexdigest(),)]

    page = await client.get(url, headers={"Accept-Language": "ru"})
    assert page.status == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    _public_headers_hold(page)
    html = await page.text()
    assert '<meta name="robots" content="noindex' in html
    assert "<h1>Планёрка</h1>" in html
    assert "2026-01-01 · 0:01 · Anna, S2" in html  # the facts: date, duration, speakers
    assert "Anna" in html
    assert "S2" in html
    assert "1:05" in html
    assert "&lt;b&gt;мир&lt;/b&gt;" in html  # escaped, never markup
    assert "Скачать текст" in html
    assert f'src="{url}/audio"' in html
    assert "secret-name" not in html
    assert "/app/" not in html
    english = await (await client.get(url, headers={"Accept-Language": "en"})).text()
    assert "Download text (TXT)" in english

    listed = (await (await client.get(f"/app/audiorecords/{record_id}/links",
                                      headers={"Remote-User": "alice"})).json())["items"]
    assert len(listed) == 1
    assert listed[0]["views"] == 2
    assert listed[0]["last_opened_at"] == "2026-01-01T00:00:00Z"
    assert "url" not in listed[0]
    steps = [s for (s,) in database.rows(
        "SELECT step FROM record_events WHERE step LIKE 'link%' ORDER BY created_at, id")]
    assert steps == ["link_created", "link_opened"]  # the first opening, not every view


async def test_transcript_and_audio_through_the_link_without_identity(
    start_api: StartApi,
) -> None:
    client = await start_api(server=NOBODY)
    assert (await client.get("/app/me")).status == 401
    # Nobody has an identity here; the owner makes the record and link through a token.
    token = await make_token(client.app, "alice")
    created = await upload(client, content=AUDIO, headers=bearer(token))
    record_id = str(created["id"])
    await transcribe(client, record_id, TALK)
    made = await (await client.post(f"/app/audiorecords/{record_id}/links",
                                    json={"audio": True}, headers=bearer(token))).json()
    assert made["expires_at"] == "2026-01-08T00:00:00Z"  # 7 days by default
    url = made["url"]
    assert (await client.get(url)).status == 200
    txt = await client.get(f"{url}/transcript?format=txt")
    assert txt.status == 200
    _public_headers_hold(txt)
    assert (await txt.text()).splitlines()[-2:] == ["S1: Привет, <b>мир</b>.",
                                                    "S2: Second speaker here."]
    srt = await client.get(f"{url}/transcript?format=srt")
    assert srt.status == 200
    assert "00:01:05,000 --> " in await srt.text()
    assert (await client.get(f"{url}/transcript?format=docx")).status == 400
    whole = await client.get(f"{url}/audio")
    assert (whole.status, await whole.read()) == (200, AUDIO)
    part = await client.get(f"{url}/audio", headers={"Range": "bytes=0-3"})
    assert (part.status, await part.read()) == (206, b"RIFF")
    _public_headers_hold(part)
    # The link is no identity: the API still refuses the visitor.
    assert (await client.get("/app/me", headers={"Referer": url})).status == 401


async def test_a_link_without_audio_has_no_player_nor_audio(client: Client) -> None:
    record_id = await _record(client)
    url = str((await _link(client, record_id))["url"])
    html = await (await client.get(url)).text()
    assert "<audio" not in html
    assert (await client.get(f"{url}/audio")).status == 404
    assert (await client.get(url + "/nope")).status == 404


async def test_revoked_and_expired_answer_the_404_of_a_link_that_never_existed(
    client: Client, clock: FakeClock, database: TestDatabase,
) -> None:
    record_id = await _record(client)
    refused_before = sample("transcriber_link_requests_total", {"outcome": "not_found"})
    never = await client.get("/s/" + "A" * 32)
    assert never.status == 404
    _public_headers_hold(never)
    never_body = await never.read()

    revoked = str((await _link(client, record_id))["url"])
    listed = (await (await client.get(f"/app/audiorecords/{record_id}/links",
                                      headers={"Remote-User": "alice"})).json())["items"]
    gone = await client.delete(f"/app/audiorecords/{record_id}/links/{listed[0]['id']}",
                               headers={"Remote-User": "alice"})
    assert gone.status == 204
    for path in (revoked, f"{revoked}/transcript?format=txt", f"{revoked}/audio"):
        answer = await client.get(path)
        assert (answer.status, await answer.read()) == (404, never_body), path

    expiring = str((await _link(client, record_id, expires_in_days=1))["url"])
    assert (await client.get(expiring)).status == 200
    clock.advance(24 * 3600 - 1)
    assert (await client.get(expiring)).status == 200
    clock.advance(1)
    answer = await client.get(expiring)
    assert (answer.status, await answer.read()) == (404, never_body)
    listed = (await (await client.get(f"/app/audiorecords/{record_id}/links",
                                      headers={"Remote-User": "alice"})).json())["items"]
    assert [(link["expired"], link["views"]) for link in listed] == [(True, 2)]
    # The unknown, the revoked three times, the expired once: each one counted.
    assert sample("transcriber_link_requests_total",
                  {"outcome": "not_found"}) - refused_before == 5
    steps = [s for (s,) in database.rows(
        "SELECT step FROM record_events WHERE step LIKE 'link%' ORDER BY created_at, id")]
    assert steps == ["link_created", "link_revoked", "link_created", "link_opened"]


async def test_only_the_owner_makes_lists_and_revokes(client: Client) -> None:
    record_id = await _record(client)
    made = await _link(client, record_id)
    bob = {"Remote-User": "bob"}
    base = f"/app/audiorecords/{record_id}/links"
    assert (await client.post(base, json={}, headers=bob)).status == 404
    assert (await client.get(base, headers=bob)).status == 404
    assert (await client.delete(f"{base}/{made['id']}", headers=bob)).status == 404
    # Bob's own record cannot revoke Alice's link either.
    bobs = str((await upload(client, headers=bob))["id"])
    assert (await client.delete(f"/app/audiorecords/{bobs}/links/{made['id']}",
                                headers=bob)).status == 404
    assert (await client.get(str(made["url"]))).status == 200


async def test_a_link_reaches_nothing_but_its_own_record(client: Client) -> None:
    mine = await _record(client)
    other = str((await upload(client, headers={"Remote-User": "bob"}))["id"])
    url = str((await _link(client, mine, audio=True))["url"])
    secret = url.removeprefix("/s/")
    for path in (f"{url}/../../app/audiorecords/{other}", f"/s/{secret}/file",
                 f"/s/{secret}/app/me", f"/s/{secret}/transcript/{other}",
                 f"/s/{other}", f"/s/{secret}{other}"):
        answer = await client.get(path, allow_redirects=False)
        assert answer.status == 404, path
    # The link is no credential for the API: with no identity, the API refuses.
    other_card = await client.get(f"/app/audiorecords/{other}",
                                  headers={"Remote-User": "alice", "Referer": url})
    assert other_card.status == 404


async def test_bodies_and_limits_refused(client: Client, start_api: StartApi) -> None:
    record_id = await _record(client)
    base = f"/app/audiorecords/{record_id}/links"
    alice = {"Remote-User": "alice"}
    for body in ({"expires_in_days": 0}, {"expires_in_days": 91}, {"expires_in_days": "7"},
                 {"expires_in_days": True}, {"audio": "yes"}, {"url": "/s/x"}, [1]):
        answer = await client.post(base, json=body, headers=alice)
        assert answer.status == 400, body
    capped = await start_api(links={"per_record_max": 2, "max_days": 30})
    record_id = str((await upload(capped, headers=alice))["id"])
    base = f"/app/audiorecords/{record_id}/links"
    assert (await capped.post(base, json={"expires_in_days": 31}, headers=alice)).status == 400
    for _ in range(2):
        assert (await capped.post(base, json={}, headers=alice)).status == 201
    assert (await capped.post(base, json={}, headers=alice)).status == 409


async def test_rate_limited_per_link_and_guesses_per_address(start_api: StartApi) -> None:
    client = await start_api(links={"requests_per_minute": 3},
                             server={"rate_limit_requests": 40})
    record_id = await _record(client)
    url = str((await _link(client, record_id))["url"])
    statuses = [(await client.get(f"{url}/transcript")).status for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = await client.get(url)
    assert limited.status == 429
    assert int(limited.headers["Retry-After"]) >= 1
    _public_headers_hold(limited)
    guesses = [(await client.get("/s/" + f"{n:032d}")).status for n in range(40)]
    assert guesses[-1] == 429  # the address's own budget, spent by guessing


async def test_hostile_secrets_and_paths_answer_404_and_logs_carry_no_secret(
    client: Client,
) -> None:
    record_id = await _record(client)
    url = str((await _link(client, record_id))["url"])
    secret = url.removeprefix("/s/")
    with structlog.testing.capture_logs() as logs:
        assert (await client.get(url)).status == 200
        hostile = ["/s/" + secret[:-1], "/s/" + secret + "x", "/s/" + "%00" * 32,
                   "/s/" + "é" * 32, "/s/" + "a" * 4000, "/s/" + "a" * 9000,
                   f"/s/{secret[:16]}%2F..%2F..%2Fapp%2Fme", f"/s/{secret}%00",
                   "/s/" + secret.swapcase()]  # a secret compares case-sensitively
        for path in hostile:
            answer = await client.get(path)
            assert answer.status in (400, 404, 414), path[:40]
    assert logs
    assert not any(secret in repr(entry) or "/s/" in repr(entry) for entry in logs)


async def test_deleting_the_record_takes_its_links(client: Client,
                                                   database: TestDatabase) -> None:
    record_id = await _record(client)
    url = str((await _link(client, record_id, audio=True))["url"])
    deleted = await client.delete(f"/app/audiorecords/{record_id}",
                                  headers={"Remote-User": "alice"})
    assert deleted.status == 204
    assert database.rows("SELECT id FROM record_links") == []
    for path in (url, f"{url}/transcript", f"{url}/audio"):
        assert (await client.get(path)).status == 404, path


async def test_an_opening_of_a_link_revoked_meanwhile_counts_nothing(
    client: Client, database: TestDatabase,
) -> None:
    """The page counts its opening before it shows anything: a link revoked between
    its read and that write shows nothing (the handler answers the 404)."""
    record_id = await _record(client)
    made = await _link(client, record_id)
    writer = client.app[keys.WRITER]
    assert await writer.ask(CountOpening(link_id=str(made["id"]), record_id=record_id)) == 1
    owner = database.scalar("SELECT owner_id FROM audio_records WHERE id = :id",
                            {"id": record_id})
    await writer.ask(RevokeLink(link_id=str(made["id"]), record_id=record_id, actor_id=owner))
    assert await writer.ask(CountOpening(link_id=str(made["id"]), record_id=record_id)) == 0
    steps = [s for (s,) in database.rows(
        "SELECT step FROM record_events WHERE step LIKE 'link%' ORDER BY created_at, id")]
    assert steps == ["link_created", "link_opened", "link_revoked"]


async def test_the_journal_names_who_made_and_revoked_a_link(client: Client) -> None:
    """A space's admin shares the owner's record: the card's history says it was them,
    and that nobody the service knows opened the link."""
    record_id = await _record(client)
    adam = {"Remote-User": "adam"}
    space = await (await client.post("/app/spaces", json={"name": "family"},
                                     headers=adam)).json()
    added = await client.post(f"/app/spaces/{space['id']}/members",
                              json={"login": "alice", "role": "editor"}, headers=adam)
    assert added.status == 201
    moved = await client.patch(f"/app/audiorecords/{record_id}", json={"space": space["id"]},
                               headers={"Remote-User": "alice"})
    assert moved.status == 200, await moved.text()
    made = await _link(client, record_id, who="adam")
    assert (await client.get(str(made["url"]))).status == 200
    gone = await client.delete(f"/app/audiorecords/{record_id}/links/{made['id']}",
                               headers=adam)
    assert gone.status == 204
    card = await (await client.get(f"/app/audiorecords/{record_id}",
                                   headers={"Remote-User": "alice"})).json()
    assert [(e["step"], e["by"]) for e in card["timeline"] if e["origin"] == "human"] == [
        ("edited", "alice"), ("moved", "alice"), ("link_created", "adam"), ("link_opened", None),
        ("link_revoked", "adam")]


async def test_the_answers_match_the_document(client: Client) -> None:
    document = await (await client.get("/app/openapi.json")).json()
    registry: Registry[Any] = Registry().with_resource(
        DOC_URI, Resource.from_contents(document, default_specification=DRAFT202012))
    checked: set[tuple[str, int]] = set()
    record_id = await _record(client)
    base = f"/app/audiorecords/{record_id}/links"

    async def call(method: str, path: str, **kwargs: object) -> dict[str, object] | None:
        response = await client.request(method, path, headers={"Remote-User": "alice"},
                                        **kwargs)  # type: ignore[arg-type]
        template = path.split("?", maxsplit=1)[0].replace(record_id, "{id}")
        template = re.sub(r"/links/[^/]+$", "/links/{link_id}", template)
        if template.startswith("/app/audiorecords/0"):  # a record that does not exist
            template = re.sub(r"/app/audiorecords/[^/]+", "/app/audiorecords/{id}", template)
        spec = document["paths"][template][method.lower()]["responses"][str(response.status)]
        checked.add((method, response.status))
        if response.status == 204:
            return None
        answer = await response.json()
        schema = spec["content"]["application/json"]["schema"]
        Draft202012Validator({"$ref": DOC_URI + schema["$ref"]},
                             registry=registry).validate(answer)
        return answer  # type: ignore[no-any-return]

    made = await call("POST", base, json={"audio": True})
    assert made is not None
    await call("POST", base, json={})  # the defaults
    await call("POST", base, data=b"7")  # not JSON
    await call("POST", base, json={"expires_in_days": 0})
    await call("GET", base)
    await call("DELETE", f"{base}/{made['id']}")
    await call("DELETE", f"{base}/{made['id']}")
    await call("GET", "/app/audiorecords/01jabcdefghjkmnpqrstvwxyz0/links")
    assert checked == {
        ("POST", 201), ("POST", 400), ("POST", 415), ("GET", 200), ("DELETE", 204), ("DELETE", 404),
        ("GET", 404)}


async def test_a_record_not_transcribed_yet_says_so(client: Client) -> None:
    record_id = str((await upload(client, headers={"Remote-User": "alice"}))["id"])
    url = str((await _link(client, record_id))["url"])
    page = await client.get(url, headers={"Accept-Language": "ru"})
    assert page.status == 200
    assert "Расшифровка ещё не готова" in await page.text()
    download = await client.get(f"{url}/transcript?format=srt")
    assert download.status == 409
    _public_headers_hold(download)
    assert (await client.get(f"{url}/transcript?format=vtt")).status == 400
