"""`GET/PUT /app/vocabulary`: the names and terms a person's records are recognized with;
`GET/PUT /app/spaces/{id}/vocabulary`: those of every record in a space.

The person's own terms are replaced whole by a `PUT` (cleaned: trimmed, duplicates
dropped, `domain.vocabulary.clean_terms`); the names of their known voices join them
when a record is recognized and are shown beside them, read only. The terms are the
person's words: never logged (only their count).

A space's terms are told after the record owner's and before the owner's voices'
names (`reads.vocabulary.for_record`). Any member may read them (`Action.LIST`); an
editor or an admin may replace them (`Action.EDIT`, as for the records there); a
person who is not a member is told the space does not exist (404).
"""

from __future__ import annotations

import structlog
from aiohttp import web

from transcriber.db import reads
from transcriber.db.commands.vocabulary import SetSpaceVocabulary, SetVocabulary
from transcriber.domain.access import Action
from transcriber.domain.shapes_people import SpaceVocabularyBody, VocabularyBody
from transcriber.domain.vocabulary import VocabularyRefused, clean_terms
from transcriber.web import keys
from transcriber.web.errors import bad_request
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import read_json
from transcriber.web.operations import declare, json_body, ok
from transcriber.web.responses import json_response
from transcriber.web.spaces import NO_SPACE, SPACE_ID, check_space

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


_TERMS_BODY = json_body({
    "type": "object", "required": ["terms"], "additionalProperties": False,
    "properties": {"terms": {"type": "array", "maxItems": 200, "items": {
        "type": "string", "maxLength": 64}}}})
_REFUSED = "Not a list of at most 200 short strings"


async def _terms_of(request: web.Request) -> tuple[str, ...]:
    """The body's terms, cleaned (`clean_terms`); 400 otherwise."""
    data = await read_json(request)
    if not isinstance(data, dict) or set(data) != {"terms"}:
        raise bad_request("the body must be a JSON object with terms only")
    try:
        return clean_terms(data["terms"])
    except VocabularyRefused as exc:
        raise bad_request(str(exc)) from None


@declare("putVocabulary", "Replace the person's terms (names of people, companies, "
                          "products)", {
    200: ok("The vocabulary as kept", VocabularyBody), 400: _REFUSED,
}, body=_TERMS_BODY)
async def put_vocabulary(request: web.Request) -> web.Response:
    terms = await _terms_of(request)
    owner_id = current_user(request).id
    await request.app[keys.WRITER].ask(SetVocabulary(owner_id=owner_id, terms=terms))
    log.info("vocabulary_saved", terms=len(terms))
    return await _answer(request, owner_id)


async def _space_answer(request: web.Request, space_id: str) -> web.Response:
    kept = await reads.vocabulary.of_space(request.app[keys.READERS], space_id=space_id)
    return json_response(SpaceVocabularyBody(terms=list(kept.terms)))


@declare("getSpaceVocabulary", "The names and terms the recognizer is told for every "
                               "record in the space (any member)", {
    200: ok("The space's vocabulary", SpaceVocabularyBody), 404: NO_SPACE,
}, parameters=(SPACE_ID,))
async def get_space_vocabulary(request: web.Request) -> web.Response:
    return await _space_answer(request, await check_space(request, Action.LIST))


@declare("putSpaceVocabulary", "Replace the space's terms (its editors and admins)", {
    200: ok("The space's vocabulary as kept", SpaceVocabularyBody), 400: _REFUSED,
    404: NO_SPACE,
}, parameters=(SPACE_ID,), body=_TERMS_BODY)
async def put_space_vocabulary(request: web.Request) -> web.Response:
    space_id = await check_space(request, Action.EDIT)
    terms = await _terms_of(request)
    await request.app[keys.WRITER].ask(SetSpaceVocabulary(space_id=space_id, terms=terms))
    log.info("space_vocabulary_saved", space_id=space_id, terms=len(terms))
    return await _space_answer(request, space_id)
