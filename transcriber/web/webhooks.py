"""The webhook routes: a person registers, lists and deletes webhooks and reads
their latest deliveries (docs/api.md "Webhooks").

Owner-scoped like every `/app/` route: another person's webhook is 404. A
URL is checked when it is registered (`ports.WebhookTransport.check`: http or
https, and every address its host resolves to must be one a delivery may
reach) and again at every delivery. A `read` token's list shows each URL
masked (scheme, host and port: `may_see_urls`). The secret is answered once, by the
registration; it is never logged, nor is the URL (the webhook's id is).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.webhooks import CreateWebhook, DeleteWebhook
from transcriber.db.reads.webhooks import DeliveryState, Webhook
from transcriber.domain.shapes import Items
from transcriber.domain.shapes_integrations import (
    DELIVERIES_SHOWN,
    DeliveryBody,
    DeliveryListBody,
    HealthBody,
    WebhookBody,
    WebhookCreatedBody,
)
from transcriber.domain.webhooks import (
    EVENTS,
    URL_MAX,
    Event,
    TargetRefused,
    masked_url,
)
from transcriber.web import keys
from transcriber.web.bearer import BEARER
from transcriber.web.errors import ApiError, bad_request, not_found
from transcriber.web.identity import current_user
from transcriber.web.jsonbody import read_json
from transcriber.web.operations import declare, empty, json_body, ok, path_param
from transcriber.web.responses import json_response

log = structlog.get_logger(__name__)

SECRET_MIN, SECRET_MAX = 16, 256
SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix of generated secrets, not a secret
# Refusals about the URL's form are plain bad requests; those about where it leads
# say so in their code.
FORM_REFUSALS = frozenset({"bad_url", "scheme"})
EXAMPLE_URL = "https://hooks.example.net/transcriber"
_WEBHOOK_ID = path_param("id", "The webhook id (a ULID); anything else is 404.")
_NO_WEBHOOK = "No such webhook"
_WEBHOOK_LINKS = {
    name: {"operationId": operation, "parameters": {"id": "$response.body#/id"}}
    for name, operation in (("DeleteWebhook", "deleteWebhook"),
                            ("ListDeliveries", "listDeliveries"))
}


@dataclass(frozen=True, slots=True, kw_only=True)
class NewWebhook:
    url: str
    events: tuple[Event, ...]
    secret: str | None


async def checked_new_webhook(request: web.Request) -> tuple[NewWebhook, str]:
    """A new webhook's body read, its target checked (a 400 names why) and its secret:
    the one given, else a fresh one (a person's webhooks and a space's alike)."""
    new = parse_new_webhook(await read_json(request))
    try:
        await request.app[keys.WEBHOOK_TRANSPORT].check(new.url)
    except TargetRefused as exc:
        code = "bad_request" if exc.reason in FORM_REFUSALS else "target_refused"
        raise ApiError(400, code, str(exc)) from None
    return new, new.secret or SECRET_PREFIX + secrets.token_urlsafe(32)


def parse_new_webhook(data: object) -> NewWebhook:
    """`{"url", "events", "secret"?}`, nothing else (pure: a bad body is a 400)."""
    if not isinstance(data, dict):
        raise bad_request("the body must be a JSON object with url and events")
    unknown = sorted(set(data) - {"url", "events", "secret"})
    if unknown:
        raise bad_request("unknown fields: " + ", ".join(unknown))
    url = data.get("url")
    if not isinstance(url, str) or not url or len(url) > URL_MAX:
        raise bad_request(f"url must be a string of at most {URL_MAX} characters")
    raw_events = data.get("events")
    if not isinstance(raw_events, list) or not raw_events:
        raise bad_request("events must be a non-empty list of " + ", ".join(EVENTS))
    events = []
    for item in raw_events:
        event = next((e for e in EVENTS if e == item), None)
        if event is None:
            raise bad_request("events must be a non-empty list of " + ", ".join(EVENTS))
        events.append(event)
    secret = data.get("secret")
    if secret is not None and not (
            isinstance(secret, str) and SECRET_MIN <= len(secret) <= SECRET_MAX
            and all(33 <= ord(ch) <= 126 for ch in secret)):
        raise bad_request(f"secret must be {SECRET_MIN} to {SECRET_MAX} printable ASCII "
                          "characters without spaces")
    return NewWebhook(url=url, events=tuple(dict.fromkeys(events)), secret=secret)


def webhook_fields(webhook: Webhook, *, mask_url: bool = False) -> dict[str, Any]:
    """The API's webhook; `mask_url` for a `read` token
    (`transcriber.domain.webhooks.masked_url`)."""
    failing = webhook.failures > 0
    return {"id": webhook.id, "url": masked_url(webhook.url) if mask_url else webhook.url,
            "events": list(webhook.events),
            "created_at": webhook.created_at, "disabled_at": webhook.disabled_at,
            "disabled_reason": webhook.disabled_reason,
            "health": HealthBody(state="failing" if failing else "ok",
                                 last_error=webhook.last_error if failing else None,
                                 next_attempt_at=webhook.paused_until if failing else None)}


def may_see_urls(request: web.Request) -> bool:
    """Whether the asker sees webhooks' URLs whole: a person (the proxy's login) or a
    `write` token does; a `read` token sees only where they lead (URLs often carry
    the receiver's secret, and a read token is the one handed to dashboards)."""
    bearer = request.get(BEARER)
    return bearer is None or bearer.scope != "read"


def delivery_body(delivery: DeliveryState) -> DeliveryBody:
    pending = delivery.state == "pending"
    return DeliveryBody(id=delivery.id, event=delivery.event, record_id=delivery.record_id,
                        status=delivery.state, attempts=delivery.attempts,
                        next_attempt_at=delivery.next_attempt_at if pending else None,
                        last_status=delivery.last_status, last_error=delivery.last_error,
                        created_at=delivery.created_at, finished_at=delivery.finished_at)


def _webhook_id(request: web.Request) -> str:
    webhook_id = parse_id(request.match_info["id"])
    if webhook_id is None:
        raise not_found("no such webhook")
    return webhook_id


@declare("createWebhook", "Register a webhook; the answer shows its secret, once", {
    201: ok("The webhook with its secret", WebhookCreatedBody, links=_WEBHOOK_LINKS),
    400: "Malformed body; a URL that is not http(s) (bad_request), or whose host does not "
         "resolve or leads to a loopback, private, link-local, metadata, multicast or "
         "unspecified address (target_refused)",
    409: "webhooks.per_user_max reached (limit_reached)",
}, body=json_body("WebhookNew", example={"url": EXAMPLE_URL, "events": ["record.done"]}))
async def create_webhook(request: web.Request) -> web.Response:
    owner_id = current_user(request).id
    new, secret = await checked_new_webhook(request)
    limit = request.app[keys.SETTINGS].webhooks.per_user_max
    try:
        created = await request.app[keys.WRITER].ask(CreateWebhook(
            owner_id=owner_id, url=new.url, secret=secret, events=new.events, limit=limit))
    except Conflict:
        raise ApiError(409, "limit_reached",
                       f"a person may have at most {limit} webhooks") from None
    log.info("webhook_created", webhook_id=created.id, events=list(new.events))
    webhook = Webhook(id=created.id, url=new.url, events=new.events,
                      created_at=created.created_at, disabled_at=None, disabled_reason=None)
    response = json_response(WebhookCreatedBody(**webhook_fields(webhook), secret=secret),
                             status=201)
    # The secret is in this answer only: no cache along the way may keep a copy.
    response.headers["Cache-Control"] = "no-store"
    return response


@declare("listWebhooks", "The user's webhooks (no secrets)",
         {200: ok("The webhooks", Items[WebhookBody])})
async def list_webhooks(request: web.Request) -> web.Response:
    webhooks = await reads.webhooks.webhooks_of_owner(request.app[keys.READERS],
                                                      owner_id=current_user(request).id)
    masked = not may_see_urls(request)
    return json_response(Items(items=[WebhookBody(**webhook_fields(w, mask_url=masked))
                                      for w in webhooks]))


@declare("deleteWebhook", "Delete the webhook; its pending deliveries are never sent", {
    204: empty("Deleted"), 404: _NO_WEBHOOK}, parameters=(_WEBHOOK_ID,))
async def delete_webhook(request: web.Request) -> web.Response:
    webhook_id = _webhook_id(request)
    try:
        await request.app[keys.WRITER].ask(
            DeleteWebhook(webhook_id=webhook_id, owner_id=current_user(request).id))
    except NotFound:
        raise not_found("no such webhook") from None
    log.info("webhook_deleted", webhook_id=webhook_id)
    return web.Response(status=204)


@declare("listDeliveries", f"The webhook's latest {DELIVERIES_SHOWN} deliveries, newest first",
         {200: ok("The deliveries", DeliveryListBody), 404: _NO_WEBHOOK},
         parameters=(_WEBHOOK_ID,))
async def list_deliveries(request: web.Request) -> web.Response:
    webhook_id = _webhook_id(request)
    readers = request.app[keys.READERS]
    if await reads.webhooks.webhook_of_owner(readers, webhook_id=webhook_id,
                                             owner_id=current_user(request).id) is None:
        raise not_found("no such webhook")
    deliveries = await reads.webhooks.latest_deliveries(readers, webhook_id=webhook_id,
                                                        limit=DELIVERIES_SHOWN)
    return json_response(DeliveryListBody(items=[delivery_body(d) for d in deliveries]))
