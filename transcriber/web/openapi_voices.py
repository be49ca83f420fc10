"""The OpenAPI paths of known voices (`transcriber.web.voices`), merged by `openapi`."""

from __future__ import annotations

from typing import Any

from transcriber.web.openapi_schemas import ID, JSON, error_doc, json_doc

_VOICE_PARAM = {"name": "voice_id", "in": "path", "required": True,
                "schema": {"type": "string"},
                "description": "The voice id; another person's, or anything else, is 404."}
_SPEAKER_PARAM = {"name": "speaker", "in": "path", "required": True,
                  "schema": {"type": "string"}, "description": "S1, S2, …"}
_EXPECTED = {"required": False, "content": {JSON: {"schema": {
    "type": "object", "additionalProperties": False,
    "properties": {"profile_id": ID}}}},
    "description": "The suggested voice the person saw: another one now is 409"}


def voice_paths(common: dict[str, Any], cross_site: dict[str, Any],
                json_body: dict[str, Any], record_id: dict[str, Any]) -> dict[str, Any]:
    """The paths, given the shared answers of `openapi`."""
    def act(operation: str, summary: str) -> dict[str, Any]:
        return {"post": {
            "operationId": operation, "summary": summary,
            "parameters": [record_id, _SPEAKER_PARAM], "requestBody": _EXPECTED,
            "responses": {"200": json_doc("The updated card", "Card"),
                          "400": error_doc("A body other than profile_id"),
                          "404": error_doc("No such record or speaker label"),
                          "409": error_doc("No such suggestion now (no_suggestion), or known "
                                        "voices are off (voice_profiles_off)"),
                          **common, **cross_site, **json_body}}}

    return {
        "/app/audiorecords/{id}/speakers/{speaker}/confirm": act(
            "confirmVoice", "The suggested name becomes the speaker's name and teaches "
                            "the voice"),
        "/app/audiorecords/{id}/speakers/{speaker}/reject": act(
            "rejectVoice", "The speaker is not the suggested voice: never suggested again "
                           "for it"),
        "/app/voices": {"get": {
            "operationId": "listVoices", "summary": "The user's known voices by name",
            "responses": {"200": json_doc("The voices", "VoiceList"), **common},
        }},
        "/app/voices/{voice_id}": {
            "patch": {
                "operationId": "renameVoice", "summary": "Rename a voice (names already "
                                                         "given on records stay)",
                "parameters": [_VOICE_PARAM],
                "requestBody": {"required": True, "content": {JSON: {"schema": {
                    "type": "object", "required": ["name"], "additionalProperties": False,
                    "properties": {"name": {"type": "string", "minLength": 1,
                                            "maxLength": 64}}}}}},
                "responses": {"200": json_doc("The voice", "Voice"),
                              "400": error_doc("Bad name"), "404": error_doc("No such voice"),
                              "409": error_doc("A voice of that name exists: merge instead"),
                              **common, **cross_site, **json_body},
            },
            "delete": {
                "operationId": "deleteVoice",
                "summary": "Delete a voice and its embeddings (names on records stay)",
                "parameters": [_VOICE_PARAM],
                "responses": {"204": {"description": "Deleted"},
                              "404": error_doc("No such voice"), **common, **cross_site},
            },
        },
        "/app/voices/{voice_id}/merge": {"post": {
            "operationId": "mergeVoice",
            "summary": "Merge a voice into another: what it learned joins the other",
            "parameters": [_VOICE_PARAM],
            "requestBody": {"required": True, "content": {JSON: {"schema": {
                "type": "object", "required": ["into"], "additionalProperties": False,
                "properties": {"into": {"type": "string"}}}}}},
            "responses": {"200": json_doc("The voice merged into", "Voice"),
                          "400": error_doc("Bad body, or a voice into itself"),
                          "404": error_doc("No such voice"),
                          **common, **cross_site, **json_body},
        }},
    }
