"""Search through HTTP: word forms, the query syntax, relevance then date, and `matches`
that point at the moment (`GET /app/audiorecords?q=`, `GET …/{id}/matches?q=`)."""

from __future__ import annotations

import pytest

from tests.helpers.web import Client, StartApi, advance, transcribe, upload
from tests.helpers.word_forms import FORMS, NEAR_MISSES, PARTIALS
from transcriber.ports import Utterance
from transcriber.web.match_pool import MATCH_POOL
from transcriber.web.matches import SNIPPET_MAX
from transcriber.web.texts import MESSAGES


def _lines(texts: list[str], *, speakers: bool = False) -> list[Utterance]:
    return [Utterance(start_ms=n * 2000, end_ms=n * 2000 + 1500, channel=0, text=text,
                      speaker=(f"S{n % 2 + 1}" if speakers else None))
            for n, text in enumerate(texts)]


async def _record(client: Client, name: str, texts: list[str], **kwargs: object) -> str:
    record_id = str((await upload(client, name=name, **kwargs))["id"])  # type: ignore[arg-type]
    await transcribe(client, record_id, _lines(texts))
    await advance(client, record_id)  # done: the next record is the one claimable
    return record_id


async def _search(client: Client, query: str, **params: str) -> list[dict[str, object]]:
    response = await client.get("/app/audiorecords", params={"q": query, **params})
    assert response.status == 200, await response.text()
    items: list[dict[str, object]] = (await response.json())["items"]
    return items


async def _find(client: Client, record_id: str, query: str) -> list[dict[str, object]]:
    response = await client.get(f"/app/audiorecords/{record_id}/matches", params={"q": query})
    assert response.status == 200, await response.text()
    found: list[dict[str, object]] = (await response.json())["matches"]
    return found


async def test_every_word_form_of_the_table_is_found_with_the_moment(
    start_api: StartApi,
) -> None:
    # Three requests a form: more than one person's minute of the default rate limit.
    client = await start_api(server={"rate_limit_requests": 1000})
    texts = [text for _, text, _ in FORMS]
    record_id = await _record(client, "forms.wav", texts)
    near = await _record(client, "near.wav", [text for _, text, _ in NEAR_MISSES])
    for typed, text, form in FORMS:
        found = await _search(client, typed)
        assert record_id in [item["id"] for item in found], typed
        moments = await _find(client, record_id, typed)
        at = texts.index(text)
        match = next((m for m in moments if m["utterance_index"] == at), None)
        assert match is not None, (typed, text)
        assert match["start_ms"] == at * 2000
        assert match["end_ms"] == at * 2000 + 1500
        snippet = str(match["snippet"])
        marked = [snippet[start:end] for start, end in match["marks"]]  # type: ignore[attr-defined]
        assert form in marked, (typed, marked)
    for typed, _, _ in NEAR_MISSES:
        assert near not in [item["id"] for item in await _search(client, typed)], typed
        assert near in [item["id"] for item in await _search(client, typed + "*")], typed


async def test_a_word_typed_in_part_finds_its_record_with_the_moment(client: Client) -> None:
    texts = [text for _, text, _ in PARTIALS]
    record_id = await _record(client, "partial.wav", texts)
    other = await _record(client, "other.wav", ["Котлета остыла, планета далеко."])
    for typed, text, form in PARTIALS:
        found = [item["id"] for item in await _search(client, typed)]
        assert record_id in found, typed
        assert other not in found, typed
        moments = await _find(client, record_id, typed)
        match = next(m for m in moments if m["utterance_index"] == texts.index(text))
        snippet = str(match["snippet"])
        marks = match["marks"]
        assert form in [snippet[s:e] for s, e in marks], typed  # type: ignore[attr-defined]
    # All four words of the issue at once, in a record of their own.
    assert record_id in [item["id"] for item in await _search(client, "поставщ бухгалт")]


async def test_phrases_exclusions_and_prefixes(client: Client) -> None:
    first = await _record(client, "a.wav", ["Пожалуйста, отправь отчёт до конца недели."])
    second = await _record(client, "b.wav", ["Недели конца не видно, черновик отчёта готов."])
    ids = [first, second]

    async def found(query: str) -> list[str]:
        return sorted(str(item["id"]) for item in await _search(client, query)
                      if item["id"] in ids)

    assert await found("неделя отчет") == sorted(ids)
    assert await found('"конца недели"') == [first]
    assert await found('"конца неделям"') == [first]  # the phrase's words in any form
    assert await found("отчёт -черновик") == [first]
    assert await found('отчёт -"недели конца"') == [first]
    assert await found("черн*") == [second]
    assert await found("черн") == []
    assert await found("-черновик") == []  # an exclusion alone finds nothing


async def test_relevance_first_then_the_newest(client: Client) -> None:
    old = await _record(client, "old.wav", ["Бюджет на квартал утверждён."])
    titled = await _record(client, "Бюджет компании.wav", ["Разное."])
    new = await _record(client, "new.wav", ["Бюджет на квартал утверждён."])
    order = [item["id"] for item in await _search(client, "бюджеты")]
    assert order == [titled, new, old]


async def test_matches_are_at_most_three_in_time_order_with_their_speaker(
    client: Client,
) -> None:
    record_id = str((await upload(client, name="long.wav"))["id"])
    texts = ["Вступление без нужного слова."] + [
        f"Строка {n}: отчёт готов." for n in range(6)] + ["Отчёт и неделя вместе."]
    await transcribe(client, record_id, _lines(texts, speakers=True))
    (item,) = await _search(client, "отчет неделя")
    matches = item["matches"]
    assert isinstance(matches, list)
    # The line holding both terms comes before lines holding one, given in time order.
    assert [m["utterance_index"] for m in matches] == [1, 2, 7]
    (item,) = await _search(client, "отчет")
    matches = item["matches"]
    assert isinstance(matches, list)
    assert [m["utterance_index"] for m in matches] == [1, 2, 3]
    assert matches[0] == {"utterance_index": 1, "start_ms": 2000, "end_ms": 3500,
                          "speaker": "S2", "snippet": "Строка 0: отчёт готов.",
                          "marks": [[10, 15]]}
    assert len(await _find(client, record_id, "отчет")) == 7


async def test_a_long_utterance_is_cut_around_its_first_mark(client: Client) -> None:
    text = "слово " * 100 + "квартальный отчёт " + "хвост " * 100
    record_id = await _record(client, "long.wav", [text])
    (match,) = await _find(client, record_id, "отчет")
    snippet = str(match["snippet"])
    assert len(snippet) <= SNIPPET_MAX
    assert snippet.startswith("…")
    assert snippet.endswith("…")
    marks = match["marks"]
    assert isinstance(marks, list)
    assert [snippet[start:end] for start, end in marks] == ["отчёт"]


async def test_a_title_match_has_no_matches_and_the_plain_list_has_none(client: Client) -> None:
    record_id = await _record(client, "Квартальный отчёт.wav", ["Разговор ни о чём."])
    (item,) = await _search(client, "отчеты")
    assert item["id"] == record_id
    assert item["matches"] == []
    listed = (await (await client.get("/app/audiorecords")).json())["items"]
    assert "matches" not in listed[0]


async def test_another_persons_record_is_never_found_nor_its_moments(client: Client) -> None:
    theirs = await _record(client, "x.wav", ["Секретный отчёт."],
                           headers={"Remote-User": "bob"})
    assert await _search(client, "отчет") == []
    response = await client.get(f"/app/audiorecords/{theirs}/matches", params={"q": "отчет"})
    assert response.status == 404


@pytest.mark.parametrize("query", ['"', "NEAR(", "a OR", "*", "-x", "(((", "'; DROP TABLE",
                                   "{title}: x", "title:*", '"a" "', "^x", "-", "a -"])
async def test_no_query_is_a_server_error(client: Client, query: str) -> None:
    record_id = await _record(client, "x.wav", ["a b c"])
    await _search(client, query)
    await _find(client, record_id, query)


async def test_topics_are_found_in_their_forms_and_leave_with_the_edit(client: Client) -> None:
    record_id = await _record(client, "talk.wav", ["Разговор ни о чём."])
    patched = await client.patch(f"/app/audiorecords/{record_id}",
                                 json={"topics": ["Стратегия", "Бюджет"]})
    assert patched.status == 200
    assert [item["id"] for item in await _search(client, "стратегии")] == [record_id]
    patched = await client.patch(f"/app/audiorecords/{record_id}", json={"topics": ["Бюджет"]})
    assert patched.status == 200
    assert await _search(client, "стратегии") == []
    assert [item["id"] for item in await _search(client, "бюджеты")] == [record_id]


async def test_sixteen_one_letter_prefixes_are_refused_in_the_askers_language(
    client: Client,
) -> None:
    """Issue 39 row 4: 16 one-letter prefixes cost half a second of CPU a request on a
    six-hour transcript; now refused before any engine or transcript is read."""
    record_id = await _record(client, "a.wav", ["Пожалуйста, отправь отчёт до конца недели."])
    attack = " ".join(f"{letter}*" for letter in "абвгдежзийклмноп")
    for path in ("/app/audiorecords", f"/app/audiorecords/{record_id}/matches"):
        for language, header in (("en", "en-GB,en;q=0.9"), ("ru", "ru-RU,ru;q=0.9,en;q=0.5")):
            response = await client.get(path, params={"q": attack},
                                        headers={"Accept-Language": header})
            assert response.status == 400
            assert (await response.json())["error"] == {
                "code": "query_too_broad", "message": MESSAGES[language]["prefix_too_short"]}
        response = await client.get(path, params={"q": "от* ко* не* по* до*"})
        assert response.status == 400
        assert (await response.json())["error"]["message"] == \
            MESSAGES["en"]["too_many_prefixes"]
    # Two letters typed in part, four of them: read, and the whole transcript scanned.
    response = await client.get(f"/app/audiorecords/{record_id}/matches",
                                params={"q": "от* ко* не* по*"})
    assert response.status == 200
    assert (await response.json())["partial"] is False
    assert [item["id"] for item in await _search(client, "от* ко*")] == [record_id]


async def test_a_spent_budget_answers_what_was_found_flagged_partial(client: Client) -> None:
    """The matching's CPU budget (`MatchPool.budget_seconds`) spent before the first
    utterance: the answers say `partial` rather than pass for complete."""
    record_id = await _record(client, "a.wav", ["Отчёт готов.", "Отчёт отправлен."])
    pool = client.app[MATCH_POOL]
    assert (await client.get(f"/app/audiorecords/{record_id}/matches",
                             params={"q": "отчет"})).status == 200
    pool.budget_seconds = -1.0  # spent before it starts
    response = await client.get(f"/app/audiorecords/{record_id}/matches", params={"q": "отчет"})
    assert await response.json() == {"matches": [], "partial": True}
    (item,) = [item for item in await _search(client, "отчет") if item["id"] == record_id]
    assert item["matches"] == []
    assert item["matches_partial"] is True
    pool.budget_seconds = 1.0
    (item,) = [item for item in await _search(client, "отчет") if item["id"] == record_id]
    assert len(item["matches"]) == 2  # type: ignore[arg-type]
    assert "matches_partial" not in item
