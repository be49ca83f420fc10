"""The follow-ups' workers of a running app, by their consumer's type, and the
follow-ups as its step actors run them (for helpers that write `done` or a halt
themselves)."""

from __future__ import annotations

from aiohttp import web

from transcriber.followups.after import FollowUps, running_notifier
from transcriber.followups.describe import DescriberActor
from transcriber.followups.registry import DESCRIBE, REPLY, WEBHOOKS
from transcriber.followups.reply import Outbox
from transcriber.followups.webhooks import WebhookDelivery
from transcriber.service.followups import WORKERS, notifier_of


def webhook_worker(app: web.Application) -> WebhookDelivery:
    return app[WORKERS].of(WEBHOOKS, WebhookDelivery)


def outbox_of(app: web.Application) -> Outbox:
    return app[WORKERS].of(REPLY, Outbox)


def describer_of(app: web.Application) -> DescriberActor:
    return app[WORKERS].of(DESCRIBE, DescriberActor)


def has_worker(app: web.Application, name: str) -> bool:
    return WORKERS in app and name in app[WORKERS]


def followups_of(app: web.Application) -> FollowUps:
    """The follow-ups as the app's step actors write and tell them."""
    return FollowUps(app[WORKERS], notifier=running_notifier(lambda: notifier_of(app)))
