"""A space's webhooks: its admins register, list and delete them and read their
latest deliveries (docs/api.md "Webhooks", "A space's webhooks").

Beside the per-person routes (`web.webhooks`), with the same body, checks and
answers: a URL is checked when it is registered (http or https, every address
its host resolves to one a delivery may reach) and again at every delivery;
the secret is answered once. Who may is `domain.access.may_in_space` with
`Action.SPACE_WEBHOOKS`: an admin; a viewer or an editor is told 403, a person
who is not a member that the space does not exist (404). Every event of a record
in the space goes to its webhooks, the record as any member sees it
(`followups.webhooks`). Logs name the space and the webhook, never the URL.
"""

from __future__ import annotations

import structlog
from aiohttp import web

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import parse_id
from transcriber.db import reads
from transcriber.db.commands.webhooks import CreateWebhook, DeleteSpaceWebhook
from transcriber.db.reads.webhooks import Webhook
from transcriber.domain.access import AccessAnswer, Action, may_in_space
from transcriber.domain.shapes import Items
from transcriber.domain.shapes_integrations import (
    DELIVERIES_SHOWN,
    DeliveryListBody,
    WebhookBody,
    WebhookCreatedBody,
)
from transcriber.web import keys
from transcriber.web.access import answer_error
from transcriber.web.errors import ApiError, not_found
from transcriber.web.identity import current_user
from transcriber.web.operations import declare, empty, json_body, ok, path_param
from transcriber.web.responses import json_response
from transcriber.web.uploadguard import expect_handler
from transcriber.web.webhooks import (
    EXAMPLE_URL,
    checked_new_webhook,
    delivery_body,
    may_see_urls,
    webhook_fields,
)

log = structlog.get_logger(__name__)

ROOT = "/app/spaces/{id}/webhooks"
ITEM = ROOT + "/{webhook_id}"

_SPACE_ID = path_param("id", "The space id; one the user is not a member of is 404.")
_WEBHOOK_ID = path_param("webhook_id", "The webhook id (a ULID); another space's is 404.")
_NO_SPACE = "No such space of the user's"
_FORBIDDEN = "Only the space's admins manage its webhooks (docs/sharing.md)"
_NO_WEBHOOK = "No such space of the user's, or no such webhook of the space"
_LINKS = {
    name: {"operationId": operation,
           "parameters": {"id": "$request.path.id", "webhook_id": "$response.body#/id"}}
    for name, operation in (("DeleteSpaceWebhook", "deleteSpaceWebhook"),
                            ("ListSpaceDeliveries", "listSpaceDeliveries"))
}


async def _admin_space(request: web.Request) -> str:
    """The route's space id when the asking person may manage its webhooks."""
    space_id = parse_id(request.match_info["id"])
    if space_id is None:
        raise not_found("no such space")
    role = await reads.access.role_in_space(request.app[keys.READERS], space_id=space_id,
                                            user_id=current_user(request).id)
    answer = may_in_space(Action.SPACE_WEBHOOKS, role)
    if answer is AccessAnswer.NOT_FOUND:
        raise not_found("no such space")
    error = answer_error(answer)
    if error is not None:
        raise error
    return space_id


def _webhook_id(request: web.Request) -> str:
    webhook_id = parse_id(request.match_info["webhook_id"])
    if webhook_id is None:
        raise not_found("no such webhook")
    return webhook_id


@declare("createSpaceWebhook", "Register a webhook of the space (its admins); every event of "
                               "a record in the space goes to it; the secret is shown once", {
    201: ok("The webhook with its secret", WebhookCreatedBody, links=_LINKS),
    400: "Malformed body; a URL that is not http(s) (bad_request), or whose host does not "
         "resolve or leads to a loopback, private, link-local, metadata, multicast or "
         "unspecified address (target_refused)",
    403: _FORBIDDEN, 404: _NO_SPACE,
    409: "webhooks.per_user_max reached for the space (limit_reached)",
}, parameters=(_SPACE_ID,),
    body=json_body("WebhookNew", example={"url": EXAMPLE_URL, "events": ["record.done"]}))
async def create_space_webhook(request: web.Request) -> web.Response:
    space_id = await _admin_space(request)
    new, secret = await checked_new_webhook(request)
    limit = request.app[keys.SETTINGS].webhooks.per_user_max
    try:
        created = await request.app[keys.WRITER].ask(CreateWebhook(
            owner_id=current_user(request).id, url=new.url, secret=secret, events=new.events,
            limit=limit, space_id=space_id))
    except Conflict:
        raise ApiError(409, "limit_reached",
                       f"a space may have at most {limit} webhooks") from None
    log.info("space_webhook_created", space_id=space_id, webhook_id=created.id,
             events=list(new.events))
    webhook = Webhook(id=created.id, url=new.url, events=new.events,
                      created_at=created.created_at, disabled_at=None, disabled_reason=None)
    response = json_response(WebhookCreatedBody(**webhook_fields(webhook), secret=secret),
                             status=201)
    # The secret is in this answer only: no cache along the way may keep a copy.
    response.headers["Cache-Control"] = "no-store"
    return response


@declare("listSpaceWebhooks", "The space's webhooks (its admins; no secrets)", {
    200: ok("The webhooks", Items[WebhookBody]), 403: _FORBIDDEN, 404: _NO_SPACE,
}, parameters=(_SPACE_ID,))
async def list_space_webhooks(request: web.Request) -> web.Response:
    space_id = await _admin_space(request)
    found = await reads.webhooks.webhooks_of_space(request.app[keys.READERS], space_id=space_id)
    masked = not may_see_urls(request)
    return json_response(Items(items=[WebhookBody(**webhook_fields(w, mask_url=masked))
                                      for w in found]))


@declare("deleteSpaceWebhook", "Delete the space's webhook; its pending deliveries are never "
                               "sent", {
    204: empty("Deleted"), 403: _FORBIDDEN, 404: _NO_WEBHOOK,
}, parameters=(_SPACE_ID, _WEBHOOK_ID))
async def delete_space_webhook(request: web.Request) -> web.Response:
    space_id = await _admin_space(request)
    webhook_id = _webhook_id(request)
    try:
        await request.app[keys.WRITER].ask(DeleteSpaceWebhook(webhook_id=webhook_id,
                                                              space_id=space_id))
    except NotFound:
        raise not_found("no such webhook") from None
    log.info("space_webhook_deleted", space_id=space_id, webhook_id=webhook_id)
    return web.Response(status=204)


@declare("listSpaceDeliveries", f"The space webhook's latest {DELIVERIES_SHOWN} deliveries, "
                                "newest first", {
    200: ok("The deliveries", DeliveryListBody), 403: _FORBIDDEN, 404: _NO_WEBHOOK,
}, parameters=(_SPACE_ID, _WEBHOOK_ID))
async def list_space_deliveries(request: web.Request) -> web.Response:
    space_id = await _admin_space(request)
    webhook_id = _webhook_id(request)
    readers = request.app[keys.READERS]
    if await reads.webhooks.webhook_of_space(readers, webhook_id=webhook_id,
                                             space_id=space_id) is None:
        raise not_found("no such webhook")
    deliveries = await reads.webhooks.latest_deliveries(readers, webhook_id=webhook_id,
                                                        limit=DELIVERIES_SHOWN)
    return json_response(DeliveryListBody(items=[delivery_body(d) for d in deliveries]))


def add_routes(app: web.Application) -> None:
    router, body = app.router, {"expect_handler": expect_handler}
    router.add_get(ROOT, list_space_webhooks)
    router.add_post(ROOT, create_space_webhook, **body)
    router.add_delete(ITEM, delete_space_webhook, **body)
    router.add_get(f"{ITEM}/deliveries", list_space_deliveries)
