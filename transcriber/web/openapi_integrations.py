"""The OpenAPI description of the ways in for scripts: `/app/tokens` and OpenAI's `/v1/`.

Merged into the document by `openapi.openapi_document`, next to the archive's
own routes; the security schemes (the proxy's `Remote-User`, a bearer token)
are declared here too.
"""

from __future__ import annotations

from typing import Any

from transcriber.domain.tokens import EXPIRES_DAYS_MAX, NAME_MAX
from transcriber.web.openai_shapes import FORMAT_ALIASES, GRANULARITIES, RESPONSE_FORMATS
from transcriber.web.openapi_schemas import (
    COMMON_RESPONSES,
    JSON,
    error_doc,
    ref,
)

SECURITY_SCHEMES: dict[str, Any] = {
    "remoteUser": {
        "type": "apiKey", "in": "header", "name": "Remote-User",
        "description": "Set by the trusted reverse proxy; without it the request is "
                       "the configured anonymous user, or 401.",
    },
    "bearerToken": {
        "type": "http", "scheme": "bearer", "bearerFormat": "tx_…",
        "description": "A personal access token (`transcriber token create`, or the web "
                       "app's API tokens page), from any address; it wins over "
                       "Remote-User. Invalid, expired or revoked: 401. A read token is 403 "
                       "on every state-changing call.",
    },
}
# `/app/`: the proxy's login or a token; `/v1/`: a token only.
APP_SECURITY: list[dict[str, list[str]]] = [{"remoteUser": []}, {"bearerToken": []}]
BEARER_ONLY: list[dict[str, list[str]]] = [{"bearerToken": []}]

# The request body (the answers' schemas are generated: `shapes_integrations`).
SCHEMAS: dict[str, Any] = {
    "TokenRequest": {
        "type": "object", "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "maxLength": NAME_MAX},
            "scope": {"type": "string", "enum": ["read", "write"], "default": "write"},
            "expires_days": {"anyOf": [{"type": "integer", "minimum": 1,
                                        "maximum": EXPIRES_DAYS_MAX}, {"type": "null"}]},
        },
    },
}


def _openai_error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": ref("OpenAIError")}}}


_CHANGES = {"403": error_doc("Cross-site request, a read token, or any token: tokens are made "
                          "and revoked by the person signed in")}
_OPENAI_COMMON = {
    "401": _openai_error("No bearer token, or one invalid, expired or revoked"),
    "404": _openai_error("No such route or model"),
    "421": _openai_error("Host is not one this service answers for (server.allowed_hosts)"),
    "429": _openai_error("Rate limited (see Retry-After)"),
}
_TRANSCRIPTION_FORM = {
    "type": "object", "required": ["file"],
    "properties": {
        "file": {"type": "string", "format": "binary"},
        "model": {"type": "string", "description": "Any name: the configured recognizer "
                                                   "answers (GET /v1/models)"},
        "language": {"type": "string", "description": "A code the recognizer supports "
                                                      "(en, ru, …); absent or empty: "
                                                      "detected"},
        "prompt": {"type": "string", "description": "Accepted and ignored"},
        "response_format": {"type": "string",
                            "enum": [*RESPONSE_FORMATS, *FORMAT_ALIASES],
                            "default": "json",
                            "description": "txt is read as text (LocalAI's spelling)"},
        "timestamp_granularities[]": {"type": "array",
                                      "items": {"type": "string",
                                                "enum": list(GRANULARITIES)}},
        "temperature": {"type": "number", "description": "Accepted and ignored"},
        "stream": {"type": "boolean", "default": False,
                   "description": "Server-sent events: transcript.text.delta per recognized "
                                  "utterance as the parts are recognized, then "
                                  "transcript.text.done (response_format json or text; "
                                  "transcriptions only)"},
    },
}


def integration_paths() -> dict[str, Any]:
    return {
        "/app/tokens": {
            "get": {
                "operationId": "listTokens", "summary": "The user's personal access tokens "
                                                        "(never the tokens themselves)",
                "responses": {"200": {"description": "The tokens, newest first", "content": {
                    JSON: {"schema": ref("TokenList")}}}, **COMMON_RESPONSES},
            },
            "post": {
                "operationId": "createToken",
                "summary": "Make a token; the answer shows it, this once",
                "requestBody": {"required": True, "content": {
                    JSON: {"schema": ref("TokenRequest")}}},
                "responses": {
                    **COMMON_RESPONSES, **_CHANGES,
                    "201": {"description": "The token, with `token`", "content": {
                        JSON: {"schema": ref("NewToken")}}},
                    "400": error_doc("Unknown field, a bad name, scope or expires_days"),
                    "408": error_doc("The body stalled or came too slowly"),
                    "409": error_doc("The user holds the most tokens one may "
                                     "(server.tokens_per_user_max)"),
                    "429": error_doc("Rate limited, or more tokens made this hour than "
                                     "server.token_creations_per_hour (see Retry-After)"),
                    "413": error_doc("A body larger than server.json_max_bytes"),
                    "415": error_doc("Not JSON, or a compressed body (Content-Encoding)"),
                    "503": error_doc("Too many request bodies arriving at once "
                                  "(see Retry-After)"),
                },
            },
        },
        "/app/tokens/{id}": {"delete": {
            "operationId": "revokeToken", "summary": "Revoke a token: refused from its next "
                                                     "request on",
            "parameters": [{"name": "id", "in": "path", "required": True,
                            "schema": {"type": "string"}}],
            "responses": {**COMMON_RESPONSES, **_CHANGES, "204": {"description": "Revoked"},
                          "404": error_doc("No such token of this user")},
        }},
        "/v1/audio/transcriptions": {"post": {
            "operationId": "createTranscription",
            "summary": "OpenAI's speech-to-text: the file becomes a record of the token's "
                       "owner; answers once it is done",
            "security": BEARER_ONLY,
            "requestBody": {"required": True, "content": {
                "multipart/form-data": {"schema": _TRANSCRIPTION_FORM}}},
            "responses": {
                **_OPENAI_COMMON,
                "200": {"description": "The transcript in response_format (stream=true: "
                                       "server-sent events)", "content": {
                    JSON: {"schema": {"anyOf": [ref("Transcription"),
                                                 ref("TranscriptionVerbose"),
                                                 ref("TranscriptionDiarized")]}},
                    "text/plain": {"schema": {"type": "string"}},
                    # One server-sent event: `data` holds its JSON (transcript.text.delta,
                    # transcript.text.done or error).
                    "text/event-stream": {"schema": {
                        "type": "object", "required": ["data"],
                        "properties": {"data": {"type": "string",
                                                "contentMediaType": "application/json"},
                                       "event": {"type": "string"}}}}}},
                "400": _openai_error("A malformed form, no file, an unknown language or "
                                     "response_format, an empty or incomplete file"),
                "403": _openai_error("A read token"),
                "408": _openai_error("The body stalled or came too slowly"),
                "413": _openai_error("Larger than server.upload_max_bytes, or longer than "
                                     "server.record_max_seconds"),
                "415": _openai_error("Not readable audio (or refused as the upload refuses "
                                     "it), or a compressed body or form part"),
                "429": _openai_error("Rate limited, or too many transcription requests "
                                     "under way, this person's (too_many_transcriptions: "
                                     "server.openai_waits_per_user_max) or everybody's "
                                     "(busy: server.openai_waits_max); see Retry-After"),
                "500": _openai_error("The record halted (record_id: it is kept)"),
                "503": _openai_error("The file could not be examined now, or too many "
                                     "uploads at once (see Retry-After)"),
                "504": _openai_error("Not done within server.openai_wait_seconds; record_id "
                                     "names the record, which goes on"),
                "507": _openai_error("No room on the server's disk for the file"),
            },
        }},
        "/v1/audio/translations": {"post": {
            "operationId": "createTranslation",
            "summary": "OpenAI's speech-to-English (Whisper's translate task): not stored "
                       "as a record; at most 25 MB",
            "security": BEARER_ONLY,
            "requestBody": {"required": True, "content": {
                "multipart/form-data": {"schema": _TRANSCRIPTION_FORM}}},
            "responses": {
                **_OPENAI_COMMON,
                "200": {"description": "The English text in response_format", "content": {
                    JSON: {"schema": {"anyOf": [ref("Transcription"),
                                                 ref("TranscriptionVerbose")]}},
                    "text/plain": {"schema": {"type": "string"}}}},
                "400": _openai_error("A malformed form, no file, an unknown language or "
                                     "response_format; translation_unsupported: the "
                                     "configured recognizer has no translate task"),
                "403": _openai_error("A read token"),
                "408": _openai_error("The body stalled or came too slowly"),
                "413": _openai_error("Larger than 25 MB"),
                "415": _openai_error("Not readable audio, or a compressed body or form part"),
                "429": _openai_error("Rate limited, or too many requests under way "
                                     "(see Retry-After)"),
                "503": _openai_error("The translation failed now, or too many uploads at "
                                     "once (see Retry-After)"),
                "504": _openai_error("Not translated within server.openai_wait_seconds"),
            },
        }},
        "/v1/models": {"get": {
            "operationId": "listModels", "summary": "The recognizer that answers",
            "security": BEARER_ONLY,
            "responses": {"200": {"description": "One model", "content": {
                JSON: {"schema": ref("ModelList")}}}, **_OPENAI_COMMON},
        }},
        "/v1/models/{model}": {"get": {
            "operationId": "getModel", "summary": "The recognizer, by its id",
            "security": BEARER_ONLY,
            "parameters": [{"name": "model", "in": "path", "required": True,
                            "schema": {"type": "string"}}],
            "responses": {"200": {"description": "The model", "content": {
                JSON: {"schema": ref("Model")}}}, **_OPENAI_COMMON},
        }},
    }
