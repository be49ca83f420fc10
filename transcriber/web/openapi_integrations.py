"""The OpenAPI parts of the ways in for scripts: the security schemes (the proxy's
`Remote-User`, a bearer token), the token request's schema, the answers every `/v1/` route
may give and the form of OpenAI's transcription request. `openapi` and the routes'
declarations (`access_tokens`, `openai_api`) use them.
"""

from __future__ import annotations

from typing import Any

from transcriber.domain.tokens import EXPIRES_DAYS_MAX, NAME_MAX
from transcriber.web.openai_shapes import FORMAT_ALIASES, GRANULARITIES, RESPONSE_FORMATS
from transcriber.web.operations import JSON, ref

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


def openai_error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": ref("OpenAIError")}}}


OPENAI_COMMON = {
    "401": openai_error("No bearer token, or one invalid, expired or revoked"),
    "404": openai_error("No such route or model"),
    "421": openai_error("Host is not one this service answers for (server.allowed_hosts)"),
    "429": openai_error("Rate limited (see Retry-After)"),
}
TRANSCRIPTION_FORM = {
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
