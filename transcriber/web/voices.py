"""The routes of known voices: the owner's profiles, and a record speaker's suggestion.

`/app/voices` lists, renames, merges and deletes the owner's profiles: their
names and counts only, never an embedding (a profile's vectors never leave the
writer). A suggestion is confirmed (it becomes the speaker's name and teaches
the profile) or rejected (never suggested for that speaker again) under the
record: `POST /app/audiorecords/{id}/speakers/{speaker}/confirm|reject`, with
an optional `{"profile_id": …}`, the profile the person saw (another one now
is a 409). Another person's profile or record is a 404.
"""

from __future__ import annotations

import structlog
from aiohttp import web

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.voices import (
    ConfirmSuggestion,
    DeleteVoice,
    MergeVoices,
    RejectSuggestion,
    RenameVoice,
)
from transcriber.db.reads.voices import VoiceProfile
from transcriber.domain import transcripts
from transcriber.domain.shapes import ID_PATTERN, CardBody, Items
from transcriber.domain.shapes_people import VoiceBody
from transcriber.pipeline.voices import voice_rules
from transcriber.web import keys
from transcriber.web.archive import card_body, record_id_of
from transcriber.web.edits import checked_text
from transcriber.web.errors import ApiError, bad_request, not_found
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import has_body, read_json
from transcriber.web.operations import (
    RECORD_ID,
    StatusDoc,
    declare,
    empty,
    json_body,
    ok,
    path_param,
)
from transcriber.web.responses import json_response

log = structlog.get_logger(__name__)

_VOICE = path_param("voice_id", "The voice id; another person's, or anything else, is 404.")
_SPEAKER = path_param("speaker", "S1, S2, …")
_NO_VOICE = "No such voice"
_EXPECTED = json_body({"type": "object", "additionalProperties": False,
                       "properties": {"profile_id": {"type": "string", "pattern": ID_PATTERN}}},
                      required=False, description="The suggested voice the person saw: "
                                                  "another one now is 409")
_SUGGESTION_ANSWERS: dict[int | str, StatusDoc | str] = {
    200: ok("The updated card", CardBody), 400: "A body other than profile_id",
    404: "No such record or speaker label",
    409: "No such suggestion now (no_suggestion), or known voices are off "
         "(voice_profiles_off)",
}


def voice_view(profile: VoiceProfile) -> VoiceBody:
    """What the API shows of a profile: its name and counts, never a vector."""
    return VoiceBody(id=profile.id, name=profile.name, records=profile.records,
                     talk_ms=profile.talk_ms, created_at=profile.created_at,
                     updated_at=profile.updated_at)


def _voice_id(request: web.Request, raw: object | None = None) -> str:
    found = parse_id(request.match_info["voice_id"] if raw is None else
                     (raw if isinstance(raw, str) else None))
    if found is None:
        raise not_found("no such voice")
    return found


def parse_voice_name(data: object) -> str:
    """`{"name": "Anna"}`: one line of at most `SPEAKER_NAME_MAX` characters."""
    if not isinstance(data, dict) or set(data) != {"name"}:
        raise bad_request("the body must be a JSON object with name only")
    name = data["name"]
    limit = transcripts.SPEAKER_NAME_MAX
    if not isinstance(name, str) or not name.strip() or len(name) > limit:
        raise bad_request(f"a voice's name is one line of 1 to {limit} characters")
    return checked_text("name", name).strip()


async def _voice_answer(request: web.Request, profile_id: str) -> web.Response:
    found = await reads.voices.profile(request.app[keys.READERS], profile_id=profile_id,
                                       owner_id=current_user(request).id)
    if found is None:
        raise not_found("no such voice")
    return json_response(voice_view(found))


@declare("listVoices", "The user's known voices by name",
         {200: ok("The voices", Items[VoiceBody])})
async def list_voices(request: web.Request) -> web.Response:
    found = await reads.voices.profiles(request.app[keys.READERS],
                                        owner_id=current_user(request).id)
    return json_response(Items(items=[voice_view(p) for p in found]))


@declare("renameVoice", "Rename a voice (names already given on records stay)", {
    200: ok("The voice", VoiceBody), 400: "Bad name", 404: _NO_VOICE,
    409: "A voice of that name exists: merge instead",
}, parameters=(_VOICE,), body=json_body({
    "type": "object", "required": ["name"], "additionalProperties": False,
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 64}}}))
async def rename_voice(request: web.Request) -> web.Response:
    profile_id = _voice_id(request)
    name = parse_voice_name(await read_json(request))
    try:
        await request.app[keys.WRITER].ask(RenameVoice(
            profile_id=profile_id, owner_id=current_user(request).id, new_name=name))
    except NotFound:
        raise not_found("no such voice") from None
    except Conflict:
        raise ApiError(409, "conflict", "a voice of that name exists: merge them instead") \
            from None
    log.info("voice_renamed", voice_id=profile_id)
    return await _voice_answer(request, profile_id)


@declare("mergeVoice", "Merge a voice into another: what it learned joins the other", {
    200: ok("The voice merged into", VoiceBody), 400: "Bad body, or a voice into itself",
    404: _NO_VOICE,
}, parameters=(_VOICE,), body=json_body({
    "type": "object", "required": ["into"], "additionalProperties": False,
    "properties": {"into": {"type": "string"}}}))
async def merge_voice(request: web.Request) -> web.Response:
    profile_id = _voice_id(request)
    data = await read_json(request)
    if not isinstance(data, dict) or set(data) != {"into"}:
        raise bad_request("the body must be a JSON object with into only")
    into = _voice_id(request, data["into"])
    try:
        await request.app[keys.WRITER].ask(MergeVoices(
            profile_id=profile_id, into=into, owner_id=current_user(request).id))
    except NotFound:
        raise not_found("no such voice") from None
    except Conflict:
        raise bad_request("a voice cannot be merged into itself") from None
    log.info("voices_merged", voice_id=profile_id, into=into)
    return await _voice_answer(request, into)


@declare("deleteVoice", "Delete a voice and its embeddings (names on records stay)", {
    204: empty("Deleted"), 404: _NO_VOICE}, parameters=(_VOICE,))
async def delete_voice(request: web.Request) -> web.Response:
    profile_id = _voice_id(request)
    try:
        await request.app[keys.WRITER].ask(DeleteVoice(profile_id=profile_id,
                                                       owner_id=current_user(request).id))
    except NotFound:
        raise not_found("no such voice") from None
    log.info("voice_deleted", voice_id=profile_id)
    return web.Response(status=204)


async def _suggestion_act(request: web.Request, *, confirm: bool) -> web.Response:
    record_id = record_id_of(request)
    speaker = request.match_info["speaker"]
    if not transcripts.SPEAKER_RE.fullmatch(speaker):
        raise not_found("no such speaker")
    expected = None
    if has_body(request):
        data = await read_json(request)
        if not isinstance(data, dict) or set(data) - {"profile_id"}:
            raise bad_request("the body may hold only profile_id")
        if "profile_id" in data:
            expected = parse_id(data["profile_id"] if isinstance(data["profile_id"], str)
                                else None)
            if expected is None:
                raise bad_request("profile_id is not a voice id")
    rules = voice_rules(request.app[keys.SETTINGS])
    if rules is None:
        raise ApiError(409, "voice_profiles_off", "known voices are turned off here")
    owner_id = current_user(request).id
    act = ConfirmSuggestion if confirm else RejectSuggestion
    try:
        await request.app[keys.WRITER].ask(act(record_id=record_id, owner_id=owner_id,
                                               speaker=speaker, expected=expected,
                                               rules=rules))
    except NotFound:
        raise not_found() from None
    except Conflict:
        raise ApiError(409, "no_suggestion",
                       "the speaker has no such suggestion now; reload the record") from None
    log.info("voice_suggestion_confirmed" if confirm else "voice_suggestion_rejected",
             record_id=record_id, speaker=speaker)
    return json_response(await card_body(request, record_id))


@declare("confirmVoice",
         "The suggested name becomes the speaker's name and teaches the voice",
         _SUGGESTION_ANSWERS, parameters=(RECORD_ID, _SPEAKER), body=_EXPECTED)
async def confirm_suggestion(request: web.Request) -> web.Response:
    return await _suggestion_act(request, confirm=True)


@declare("rejectVoice",
         "The speaker is not the suggested voice: never suggested again for it",
         _SUGGESTION_ANSWERS, parameters=(RECORD_ID, _SPEAKER), body=_EXPECTED)
async def reject_suggestion(request: web.Request) -> web.Response:
    return await _suggestion_act(request, confirm=False)
