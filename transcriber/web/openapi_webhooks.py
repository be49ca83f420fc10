"""The webhook part of the OpenAPI document: the schema of the body that registers one
(the routes are declared in `web.webhooks`), and the deliveries themselves as OpenAPI 3.1
`webhooks` (what the service POSTs to a receiver). `openapi.py` merges them in."""

from __future__ import annotations

from typing import Any

from transcriber.domain.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    EVENTS,
    SIGNATURE_HEADER,
    URL_MAX,
)
from transcriber.web.openapi_schemas import ID
from transcriber.web.operations import ref
from transcriber.web.webhooks import SECRET_MAX, SECRET_MIN

_JSON = "application/json"
_EVENTS = {"type": "string", "enum": list(EVENTS)}

# The request body (the answers' schemas are generated: `shapes_integrations`).
WEBHOOK_SCHEMAS: dict[str, Any] = {
    "WebhookNew": {
        "type": "object",
        "required": ["url", "events"],
        "additionalProperties": False,
        "properties": {
            "url": {"type": "string", "minLength": 1, "maxLength": URL_MAX,
                    "description": "http:// or https://; its host must resolve only to "
                                   "public addresses (unless webhooks.allow_private_targets)"},
            "events": {"type": "array", "minItems": 1, "items": _EVENTS},
            "secret": {"type": "string", "minLength": SECRET_MIN, "maxLength": SECRET_MAX,
                       "pattern": "^[!-~]+$",
                       "description": "The signing secret; absent: one is generated"},
        },
    },
}


def outgoing_webhooks() -> dict[str, Any]:
    """What a receiver gets: one POST per event, signed."""
    headers = [
        {"name": EVENT_HEADER, "in": "header", "required": True, "schema": _EVENTS},
        {"name": DELIVERY_HEADER, "in": "header", "required": True, "schema": ID,
         "description": "The delivery id: the same on every retry (drop a duplicate)"},
        {"name": SIGNATURE_HEADER, "in": "header", "required": True,
         "schema": {"type": "string", "pattern": "^t=[0-9]+, v1=[0-9a-f]{64}$"},
         "description": "t=<unix seconds>, v1=<hex HMAC-SHA256 of \"<t>.<body>\" keyed "
                        "with the webhook's secret>"},
    ]
    return {event: {"post": {
        "summary": f"The {event} event",
        "parameters": headers,
        "requestBody": {"required": True, "content": {
            _JSON: {"schema": ref("WebhookPayload")}}},
        "responses": {
            "2XX": {"description": "Delivered: never sent again"},
            "410": {"description": "Gone: the webhook is disabled"},
            "default": {"description": "Tried again with backoff (Retry-After honoured) "
                                       "until webhooks.delivery_window_hours pass"},
        },
    }} for event in EVENTS}
