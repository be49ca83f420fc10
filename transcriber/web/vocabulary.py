"""`GET/PUT /app/vocabulary`: the names and terms a person's records are recognized with.

The person's own terms are replaced whole by a `PUT` (cleaned: trimmed, duplicates
dropped, `domain.vocabulary.clean_terms`); the names of their known voices join them
when a record is recognized and are shown beside them, read only. The terms are the
person's words: never logged (only their count).
"""

from __future__ import annotations

import structlog
from aiohttp import web

from transcriber.db import reads
from transcriber.db.commands.vocabulary import SetVocabulary
from transcriber.domain.shapes_people import VocabularyBody
from transcriber.domain.vocabulary import VocabularyRefused, clean_terms
from transcriber.web import keys
from transcriber.web.errors import bad_request
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import read_json
from transcriber.web.operations import declare, json_body, ok
from transcriber.web.responses import json_response

log = structlog.get_logger(__name__)


async def _answer(request: web.Request, owner_id: str) -> web.Response:
    readers = request.app[keys.READERS]
    own = await reads.vocabulary.of_owner(readers, owner_id=owner_id)
    names = await reads.vocabulary.voice_names(readers, owner_id=owner_id)
    return json_response(VocabularyBody(terms=list(own.terms), voice_names=list(names)))


@declare("getVocabulary", "The names and terms the recognizer is told for the person's "
                          "records", {200: ok("The vocabulary", VocabularyBody)})
async def get_vocabulary(request: web.Request) -> web.Response:
    return await _answer(request, current_user(request).id)


@declare("putVocabulary", "Replace the person's terms (names of people, companies, "
                          "products)", {
    200: ok("The vocabulary as kept", VocabularyBody),
    400: "Not a list of at most 200 short strings",
}, body=json_body({
    "type": "object", "required": ["terms"], "additionalProperties": False,
    "properties": {"terms": {"type": "array", "maxItems": 200, "items": {
        "type": "string", "maxLength": 64}}}}))
async def put_vocabulary(request: web.Request) -> web.Response:
    data = await read_json(request)
    if not isinstance(data, dict) or set(data) != {"terms"}:
        raise bad_request("the body must be a JSON object with terms only")
    try:
        terms = clean_terms(data["terms"])
    except VocabularyRefused as exc:
        raise bad_request(str(exc)) from None
    owner_id = current_user(request).id
    await request.app[keys.WRITER].ask(SetVocabulary(owner_id=owner_id, terms=terms))
    log.info("vocabulary_saved", terms=len(terms))
    return await _answer(request, owner_id)
