"""`GET /app/ask/conversations`: a person's conversations, the latest used first, in
keyset pages, each with its first question and its turns' count; only the asker's own,
a deleted one gone from the list (both engines)."""

from __future__ import annotations

from typing import Any

from tests.helpers.web import Client, advance, transcribe, upload
from transcriber.ports import Utterance
from transcriber.testing.clock import FakeClock


async def _ask(client: Client, question: str, conversation: str | None = None,
               **headers: str) -> str:
    body: dict[str, Any] = {"question": question}
    if conversation is not None:
        body["conversation"] = conversation
    response = await client.post("/app/ask", json=body, headers=headers)
    assert response.status == 200, await response.text()
    return str((await response.json())["conversation"])


async def _listed(client: Client, query: str = "", **headers: str) -> dict[str, Any]:
    response = await client.get(f"/app/ask/conversations{query}", headers=headers)
    assert response.status == 200, await response.text()
    page: dict[str, Any] = await response.json()
    return page


async def test_a_persons_conversations_latest_first_in_pages_and_only_theirs(
        client: Client, clock: FakeClock) -> None:
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, [Utterance(
        start_ms=0, end_ms=3000, channel=0, text="The supplier raised prices by twelve percent.")])
    await advance(client, record_id)
    assert await _listed(client) == {"items": [], "next_cursor": None}
    first = await _ask(client, "What did the supplier raise?")
    clock.advance(60)
    second = await _ask(client, "How much were prices raised?")
    clock.advance(60)
    third = await _ask(client, "Who is the supplier?")
    clock.advance(60)
    # A follow-up moves its conversation to the top.
    assert await _ask(client, "and by how much?", first) == first
    bob = await _ask(client, "supplier", **{"Remote-User": "bob"})

    page = await _listed(client, "?limit=2")
    assert [c["id"] for c in page["items"]] == [first, third]
    assert page["items"][0]["first_question"] == "What did the supplier raise?"
    assert page["items"][0]["turns"] == 2
    assert page["items"][1]["turns"] == 1
    assert page["items"][0]["updated_at"] > page["items"][0]["created_at"]
    rest = await _listed(client, f"?limit=2&cursor={page['next_cursor']}")
    assert [c["id"] for c in rest["items"]] == [second]
    assert rest["next_cursor"] is None
    # Another person's list holds only theirs.
    assert [c["id"] for c in (await _listed(client, **{"Remote-User": "bob"}))["items"]] == [bob]
    # A deleted conversation leaves the list.
    assert (await client.delete(f"/app/ask/conversations/{third}")).status == 204
    assert [c["id"] for c in (await _listed(client))["items"]] == [first, second]


async def test_a_bad_limit_or_cursor_is_a_400(client: Client) -> None:
    for query in ("?limit=0", "?limit=101", "?limit=x", "?cursor=nonsense"):
        response = await client.get(f"/app/ask/conversations{query}")
        assert response.status == 400, query
