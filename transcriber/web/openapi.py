"""The OpenAPI 3.1 description of `/app/` and `/v1/`, served at `GET /app/openapi.json`.

The paths (parameters, statuses, request bodies) are written here next to the
routes they describe; the schemas of the answers are generated from the
response shapes the routes return (`domain.shapes`, `openapi_schemas`). A test
validates real responses against it and a schemathesis run fuzzes the routes
from it.
Limits in it (page size) come from the running settings.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from transcriber.domain.transcript_formats import FORMATS
from transcriber.settings import ServerSettings
from transcriber.web import keys
from transcriber.web.openapi_ask import SCHEMAS as ASK_SCHEMAS
from transcriber.web.openapi_ask import ask_paths
from transcriber.web.openapi_integrations import (
    APP_SECURITY,
    SECURITY_SCHEMES,
    integration_paths,
)
from transcriber.web.openapi_integrations import SCHEMAS as INTEGRATION_SCHEMAS
from transcriber.web.openapi_links import LINK_REQUEST, link_paths
from transcriber.web.openapi_schemas import (
    COMMON_RESPONSES,
    JSON,
    component_schemas,
    error_doc,
    json_doc,
    ref,
)
from transcriber.web.openapi_spaces import space_paths, with_forbidden
from transcriber.web.openapi_uploads import upload_paths
from transcriber.web.openapi_vocabulary import vocabulary_paths
from transcriber.web.openapi_voices import voice_paths
from transcriber.web.openapi_webhooks import WEBHOOK_SCHEMAS, outgoing_webhooks, webhook_paths
from transcriber.web.responses import json_response

_LANGUAGE_PARAM = {
    "name": "language", "in": "query", "required": False, "schema": {"type": "string"},
    "description": "`auto` or a code the active recognizer supports (`en`, `ru`, …); "
                   "an unknown one is 400 with the list",
}
_MODEL_PARAM = {
    "name": "model", "in": "query", "required": False, "schema": {"type": "string"},
    "description": "The model to recognize it with (`whisper-base`, or a name `transcriber "
                   "models list` shows); absent: `recognizer.routes` chooses; an unknown "
                   "one is 400 with the list",
}
_SPEAKERS_PARAM = {
    "name": "speakers", "in": "query", "required": False,
    "schema": {"type": "integer", "minimum": 1, "maximum": 8},
    "description": "How many people speak (1: speakers are not told apart); absent: "
                   "found by listening",
}
_SPACE_PARAM = {
    "name": "space", "in": "query", "required": False, "schema": {"type": "string"},
    "description": "The space the record goes into (an editor or admin there); absent: "
                   "the user's default space; empty: none (docs/sharing.md)",
}
_ID_PARAM = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
             "description": "The record id (a ULID); anything else is 404."}
# State-changing calls: a browser's cross-site request without the web app's
# X-Transcriber-Client header is refused.
_CROSS_SITE = {"403": error_doc("Cross-site request (send X-Transcriber-Client: web), or a "
                             "read token")}
# Routes that read a JSON body (jsonbody.read_json).
_JSON_BODY = {
    "408": error_doc("The body stalled or came too slowly"),
    "413": error_doc("A body larger than server.json_max_bytes"),
    "415": error_doc("Not JSON, or a compressed body (Content-Encoding)"),
    "503": error_doc("Too many request bodies arriving at once (see Retry-After)"),
}
_RECORD_LINKS = {
    name: {"operationId": operation, "parameters": {"id": "$response.body#/id"}}
    for name, operation in (("GetRecord", "getRecord"), ("DownloadFile", "downloadFile"),
                            ("DownloadTranscript", "downloadTranscript"),
                            ("ResumeRecord", "resumeRecord"), ("EditRecord", "editRecord"),
                            ("CorrectTranscript", "correctTranscript"),
                            ("RetranscribeRecord", "retranscribeRecord"))
}


_QUERY_SYNTAX = (
    "Words match in any of their forms (Russian and English word forms, ё as е, case "
    "ignored); `word*` matches as a prefix; `\"two words\"` in that order; `-word` "
    "excludes. Every term is required.")


def openapi_document(server: ServerSettings) -> dict[str, Any]:
    record_paths: dict[str, Any] = {
        "/app/me": {"get": {
            "operationId": "me", "summary": "The current user",
            "responses": {"200": json_doc("The user", "User"), **COMMON_RESPONSES},
        }},
        "/app/audiorecords": {
            "get": {
                "operationId": "listRecords",
                "summary": "One keyset page of the user's records, newest first, or search",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {
                        "type": "integer", "minimum": 1, "maximum": server.page_max,
                        "default": server.page_default}},
                    {"name": "cursor", "in": "query", "schema": {"type": "string"},
                     "description": "`next_cursor` of the previous page"},
                    {"name": "q", "in": "query", "schema": {"type": "string", "maxLength": 200},
                     "description": _QUERY_SYNTAX + " Results are best first (title and "
                                    "brief weigh most), then newest first; each carries "
                                    "`matches`."},
                    {"name": "topic", "in": "query", "schema": {"type": "string"},
                     "description": "Only the records carrying this topic (not with `q`)"},
                    {"name": "scope", "in": "query", "schema": {
                        "type": "string",
                        "pattern": "^(mine|shared|space:[0-7][0-9a-hjkmnp-tv-z]{25})$"},
                     "description": "Only the user's own records, those shared with them, "
                                    "or one space's; absent: every record they may see "
                                    "(docs/sharing.md)"},
                ],
                "responses": {**COMMON_RESPONSES, "200": json_doc("A page", "RecordPage"),
                              "404": error_doc("A scope naming a space that is not one of "
                                               "the user's"),
                              "400": error_doc("Bad limit, cursor or query, q with topic, "
                                               "or a query too broad (`query_too_broad`)")},
            },
            "post": {
                "operationId": "uploadRecord",
                "summary": "Upload a recording (streamed, at most the configured size)",
                "parameters": [_LANGUAGE_PARAM, _SPEAKERS_PARAM, _SPACE_PARAM,
                               {"name": "X-Filename", "in": "header", "required": False,
                                "schema": {"type": "string"},
                                "description": "The file's name for a raw body "
                                               "(percent-encoded UTF-8 allowed)"}],
                "requestBody": {"required": True, "content": {
                    "multipart/form-data": {"schema": {
                        "type": "object", "required": ["file"],
                        "properties": {
                            "language": {"type": "string", "description":
                                         "As the `language` parameter; before the file"},
                            "speakers": {"type": "string", "pattern": "^[1-8]$",
                                         "description": "As the `speakers` parameter; "
                                                        "before the file"},
                            "space": {"type": "string", "description":
                                      "As the `space` parameter; before the file"},
                            "file": {"type": "string", "format": "binary"}},
                    }},
                    "application/octet-stream": {"schema": {"type": "string",
                                                            "format": "binary"}},
                }},
                "responses": {
                    **COMMON_RESPONSES, **_CROSS_SITE,
                    "201": {**json_doc("The new record", "Record"), "links": _RECORD_LINKS},
                    "403": error_doc("Cross-site request, a read token, or a space where the "
                                     "user's role files no records"),
                    "404": error_doc("A space that is not one of the user's"),
                    "400": error_doc("Malformed, empty or incomplete upload, an unknown "
                                  "language, or speakers outside 1-8"),
                    "408": error_doc("The body stalled or came too slowly"),
                    "413": error_doc("Larger than the limit, or longer than "
                                  "server.record_max_seconds"),
                    "415": error_doc("Not readable audio, sampled below 8 kHz or above "
                                  "server.max_sample_rate, with more channels than "
                                  "server.max_channels, or a compressed body or form part"),
                    "429": error_doc("Rate limited, or too many uploads at once by this user "
                                  "(see Retry-After), or quota_exceeded: this user's queued "
                                  "audio would pass "
                                  "server.queued_audio_max_seconds_per_user"),
                    "503": error_doc("The file could not be examined now, or too many uploads "
                                  "at once (see Retry-After)"),
                    "507": error_doc("No room on the server's disk for the file (its declared "
                                  "size plus storage.min_free_bytes); nothing was stored"),
                },
            },
        },
        "/app/audiorecords/{id}": {
            "get": {
                "operationId": "getRecord", "summary": "The record card",
                "parameters": [_ID_PARAM],
                "responses": {"200": json_doc("The card", "Card"),
                              "404": error_doc("No such record"), **COMMON_RESPONSES},
            },
            "patch": {
                "operationId": "editRecord", "summary": "Set title, brief, topics or speaker names",
                "parameters": [_ID_PARAM],
                "requestBody": {"required": True, "content": {
                    JSON: {"schema": ref("RecordEdit")}}},
                "responses": {**COMMON_RESPONSES, **_CROSS_SITE, **_JSON_BODY,
                              "200": json_doc("The updated card", "Card"),
                              "400": error_doc("Unknown field, value too long, a sixth topic"),
                              "404": error_doc("No such record")},
            },
            "delete": {
                "operationId": "deleteRecord",
                "summary": "Delete the record with its files, in any stage",
                "parameters": [_ID_PARAM],
                "responses": {**COMMON_RESPONSES, **_CROSS_SITE, "204": {"description": "Deleted"},
                              "404": error_doc("No such record")},
            },
        },
        "/app/topics": {"get": {
            "operationId": "listTopics",
            "summary": "One keyset page of the user's topics by name, with record counts",
            "parameters": [
                {"name": "limit", "in": "query", "schema": {
                    "type": "integer", "minimum": 1, "maximum": server.page_max,
                    "default": server.page_default}},
                {"name": "cursor", "in": "query", "schema": {"type": "string"},
                 "description": "`next_cursor` of the previous page"},
            ],
            "responses": {"200": json_doc("A page of topics", "TopicList"), **COMMON_RESPONSES,
                          "400": error_doc("Bad limit or cursor")},
        }},
        "/app/audiorecords/{id}/file": {"get": {
            "operationId": "downloadFile", "summary": "The audio, with Range support",
            "parameters": [_ID_PARAM, {"name": "copy", "in": "query", "schema": {
                "type": "string", "enum": ["original", "normalized"], "default": "original"}}],
            "responses": {
                "200": {"description": "The whole file",
                        "content": {"audio/*": {"schema": {"type": "string",
                                                           "format": "binary"}},
                                    "application/octet-stream": {"schema": {
                                        "type": "string", "format": "binary"}}}},
                "206": {"description": "The requested range",
                        "content": {"audio/*": {"schema": {"type": "string",
                                                           "format": "binary"}}}},
                **COMMON_RESPONSES, "400": error_doc("Bad copy"),
                "404": error_doc("No such record or copy"),
                "416": error_doc("Range not satisfiable"),
                "503": error_doc("The bucket holding the file cannot be reached now "
                                 "(`storage.files = s3`)"),
            },
        }},
        "/app/audiorecords/{id}/transcript": {"get": {
            "operationId": "downloadTranscript", "summary": "The transcript as a download",
            "parameters": [_ID_PARAM, {"name": "format", "in": "query", "schema": {
                "type": "string", "enum": list(FORMATS), "default": "txt"}},
                {"name": "version", "in": "query", "schema": {
                    "type": "string", "enum": ["current", "original"], "default": "current"},
                 "description": "`original`: the recognizer's, without corrections"}],
            "responses": {
                "200": {"description": "The transcript", "content": {
                    "text/plain": {"schema": {"type": "string"}},
                    "application/x-subrip": {"schema": {"type": "string"}},
                    "text/vtt": {"schema": {"type": "string"}},
                    "application/json": {"schema": {"type": "object"}},
                    "text/markdown": {"schema": {"type": "string"}},
                    "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
                        {"schema": {"type": "string", "format": "binary"}},
                }},
                **COMMON_RESPONSES, "400": error_doc("Bad format or version"),
                "404": error_doc("No such record"), "409": error_doc("No transcript yet"),
            },
        }, "patch": {
            "operationId": "correctTranscript",
            "summary": "Correct utterances: a new revision of the transcript",
            "parameters": [_ID_PARAM],
            "requestBody": {"required": True, "content": {
                JSON: {"schema": ref("TranscriptEdit")}}},
            "responses": {**COMMON_RESPONSES, **_CROSS_SITE, **_JSON_BODY,
                          "200": json_doc("The updated card", "Card"),
                          "400": error_doc("Malformed correction, unknown utterance or field"),
                          "404": error_doc("No such record"),
                          "409": error_doc("Stale revision (conflict) or no transcript yet")},
        }},
        "/app/audiorecords/{id}/matches": {"get": {
            "operationId": "findInTranscript",
            "summary": "Every utterance of the current transcript holding the query's words",
            "parameters": [_ID_PARAM, {"name": "q", "in": "query", "schema": {
                "type": "string", "maxLength": 200}, "description": _QUERY_SYNTAX}],
            "responses": {**COMMON_RESPONSES,
                          "200": json_doc("The matches, in time order", "MatchList"),
                          "400": error_doc("q is longer than 200 characters, or too broad "
                                           "(`query_too_broad`: a prefix of one letter, "
                                           "more than 4 prefixes)"),
                          "404": error_doc("No such record")},
        }},
        "/app/audiorecords/{id}/resume": {"post": {
            "operationId": "resumeRecord", "summary": "Resume a halted record",
            "parameters": [_ID_PARAM],
            "responses": {"200": json_doc("The record", "Record"),
                          "404": error_doc("No such record"), "409": error_doc("Not halted"),
                          **COMMON_RESPONSES, **_CROSS_SITE},
        }},
        "/app/audiorecords/{id}/retranscribe": {"post": {
            "operationId": "retranscribeRecord",
            "summary": "Transcribe a done or halted record again, optionally in another language",
            "parameters": [_ID_PARAM, _LANGUAGE_PARAM, _MODEL_PARAM],
            "requestBody": {"required": False, "content": {JSON: {"schema": {
                "type": "object", "additionalProperties": False,
                "properties": {"language": {"type": "string"},
                               "model": {"type": "string"}}}}}},
            "responses": {"200": json_doc("The card (the old transcript until the new one)",
                                       "Card"),
                          "400": error_doc("Unknown language or model (the message lists "
                                           "them)"),
                          "404": error_doc("No such record"),
                          "409": error_doc("Neither done nor halted"),
                          **COMMON_RESPONSES, **_CROSS_SITE, **_JSON_BODY},
        }},
        "/app/openapi.json": {"get": {
            "operationId": "openapi", "summary": "This document", "security": [],
            "responses": {"200": {"description": "OpenAPI 3.1",
                                  "content": {JSON: {"schema": {"type": "object"}}}},
                          "429": COMMON_RESPONSES["429"]},
        }},
    }
    record_paths.update(upload_paths(COMMON_RESPONSES, _CROSS_SITE))
    record_paths.update(webhook_paths(error=error_doc, answer=json_doc, common=COMMON_RESPONSES,
                                      cross_site=_CROSS_SITE, json_body=_JSON_BODY))
    return {
        "openapi": "3.1.0",
        "info": {"title": "transcriber archive API", "version": "1"},
        "components": {
            "schemas": {**component_schemas(), **WEBHOOK_SCHEMAS, **INTEGRATION_SCHEMAS,
                        "LinkRequest": LINK_REQUEST, **ASK_SCHEMAS},
            "securitySchemes": SECURITY_SCHEMES,
        },
        "security": APP_SECURITY,
        "paths": with_forbidden({
            **record_paths,
            **voice_paths(COMMON_RESPONSES, _CROSS_SITE, _JSON_BODY, _ID_PARAM),
            **space_paths(COMMON_RESPONSES, _CROSS_SITE, _JSON_BODY, _ID_PARAM),
            **link_paths(COMMON_RESPONSES, _CROSS_SITE, _JSON_BODY, _ID_PARAM),
            **ask_paths(COMMON_RESPONSES, _CROSS_SITE, _JSON_BODY),
            **vocabulary_paths(COMMON_RESPONSES, _CROSS_SITE, _JSON_BODY),
            **integration_paths()}),
        "webhooks": outgoing_webhooks(),
    }


async def serve_openapi(request: web.Request) -> web.Response:
    return json_response(openapi_document(request.app[keys.SETTINGS].server))
