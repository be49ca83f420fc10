"""The webhook part of the OpenAPI document: the `/app/webhooks` routes, the schema of
the body that registers one, and the deliveries themselves as OpenAPI 3.1 `webhooks` (what the
service POSTs to a receiver). `openapi.py` merges them in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from transcriber.domain.shapes_integrations import DELIVERIES_SHOWN
from transcriber.domain.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    EVENTS,
    SIGNATURE_HEADER,
    URL_MAX,
)
from transcriber.web.openapi_schemas import ID, ref
from transcriber.web.webhooks import SECRET_MAX, SECRET_MIN

_JSON = "application/json"
_EVENTS = {"type": "string", "enum": list(EVENTS)}
EXAMPLE_URL = "https://hooks.example.net/transcriber"
_WEBHOOK_LINKS = {
    name: {"operationId": operation, "parameters": {"id": "$response.body#/id"}}
    for name, operation in (("DeleteWebhook", "deleteWebhook"),
                            ("ListDeliveries", "listDeliveries"))
}

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


def webhook_paths(*, error: Callable[[str], dict[str, Any]],
                  answer: Callable[[str, str], dict[str, Any]],
                  common: Mapping[str, Any], cross_site: Mapping[str, Any],
                  json_body: Mapping[str, Any]) -> dict[str, Any]:
    """The routes, given the shared responses of `openapi.py`."""
    webhook_id = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
                  "description": "The webhook id (a ULID); anything else is 404."}
    return {
        "/app/webhooks": {
            "get": {
                "operationId": "listWebhooks", "summary": "The user's webhooks (no secrets)",
                "responses": {**common, "200": answer("The webhooks", "WebhookList")},
            },
            "post": {
                "operationId": "createWebhook",
                "summary": "Register a webhook; the answer shows its secret, once",
                "requestBody": {"required": True, "content": {_JSON: {
                    "schema": ref("WebhookNew"),
                    "example": {"url": EXAMPLE_URL, "events": ["record.done"]}}}},
                "responses": {
                    **common, **cross_site, **json_body,
                    "201": {**answer("The webhook with its secret", "WebhookCreated"),
                            "links": _WEBHOOK_LINKS},
                    "400": error("Malformed body; a URL that is not http(s) (bad_request), or "
                                 "whose host does not resolve or leads to a loopback, "
                                 "private, link-local, metadata, multicast or unspecified "
                                 "address (target_refused)"),
                    "409": error("webhooks.per_user_max reached (limit_reached)"),
                },
            },
        },
        "/app/webhooks/{id}": {"delete": {
            "operationId": "deleteWebhook",
            "summary": "Delete the webhook; its pending deliveries are never sent",
            "parameters": [webhook_id],
            "responses": {**common, **cross_site, "204": {"description": "Deleted"},
                          "404": error("No such webhook")},
        }},
        "/app/webhooks/{id}/deliveries": {"get": {
            "operationId": "listDeliveries",
            "summary": f"The webhook's latest {DELIVERIES_SHOWN} deliveries, newest first",
            "parameters": [webhook_id],
            "responses": {**common, "200": answer("The deliveries", "DeliveryList"),
                          "404": error("No such webhook")},
        }},
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
