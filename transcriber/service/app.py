"""`build_app`: one aiohttp application holding the service, or the part of it one
process runs (`transcriber serve --role all|web|worker`, `service.roles`).

Startup runs the lifecycle contexts in the order listed and cleanup in
reverse: the writer, started first, is the last to close and drains its
mailbox when it does. The singleton duties (Telegram polling, the outbox, the
sweeps, the describer) run inside their contexts only while this process holds
their lock (`service.duties`). Parts given here (a clock, a step table, a
notifier, a recognizer, a webhook transport, a describer, the duty locks)
replace the ones the contexts would build; tests inject fakes this way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiohttp import web

from transcriber.core.clock import Clock, SystemClock
from transcriber.followups.registry import FOLLOWUPS
from transcriber.pipeline.settled import SettledRecords
from transcriber.pipeline.step import Step
from transcriber.ports import Describer, Duty, DutyLocks, Notifier, Recognizer, WebhookTransport
from transcriber.service.answerer import answerer_ctx
from transcriber.service.describer import describer_ctx
from transcriber.service.duties import DUTY_LOCKS, CleanupContext, duty_ctx, duty_locks_ctx
from transcriber.service.fatal import fatal_ctx
from transcriber.service.followups import followups_ctx, followups_work
from transcriber.service.pipeline import pipeline_ctx
from transcriber.service.providers import providers_ctx
from transcriber.service.roles import Role, RolePlan, plan_of
from transcriber.service.search_index import search_index_ctx
from transcriber.service.storage import storage_ctx
from transcriber.service.telegram import bot_ctx, telegram_ctx
from transcriber.service.uploads import uploads_ctx
from transcriber.service.voice import wyoming_ctx
from transcriber.service.watch import watch_ctx
from transcriber.service.webhooks import webhooks_ctx
from transcriber.settings import Settings
from transcriber.web import keys, ops
from transcriber.web.api import setup_api
from transcriber.web.match_pool import match_pool_ctx
from transcriber.web.pwa import setup_pwa
from transcriber.web.spa import setup_spa

ROLE = web.AppKey("role", Role)


def build_app(
    settings: Settings,
    *,
    role: Role = Role.ALL,
    clock: Clock | None = None,
    steps: Mapping[str, Step] | None = None,
    notifier: Notifier | None = None,
    recognizer: Recognizer | None = None,
    describer: Describer | None = None,
    webhook_transport: WebhookTransport | None = None,
    duty_locks: DutyLocks | None = None,
    one_shot: bool = False,
) -> web.Application:
    """The service, as `role` runs it (`service.roles`). `one_shot=True` (a command
    that runs the pipeline in its own process) runs the step actors and takes no
    duty: it keeps the Telegram notifier, so its replies are written to the outbox,
    but never polls (a second poller would take the server's messages) and sends
    nothing (the service's outbox sends them, as its webhook deliveries)."""
    plan = plan_of(role, one_shot=one_shot)
    # Uploads stream (request.content); only a body read whole (`request.read()`)
    # meets this cap, and none may be larger than a JSON body.
    app = web.Application(client_max_size=settings.server.json_max_bytes)
    app[keys.SETTINGS] = settings
    app[keys.CLOCK] = clock or SystemClock()
    app[keys.SETTLED] = SettledRecords()
    app[ROLE] = role
    given: list[tuple[web.AppKey[Any], object | None]] = [
        (keys.STEPS, steps), (keys.NOTIFIER, notifier), (keys.RECOGNIZER, recognizer),
        (keys.DESCRIBER, describer), (keys.WEBHOOK_TRANSPORT, webhook_transport),
        (DUTY_LOCKS, duty_locks)]
    for key, part in given:
        if part is not None:
            app[key] = part
    for context in _contexts(plan):
        app.cleanup_ctx.append(context)
    if plan.doors:
        ops.add_routes(app)
        setup_api(app)
        # The web app: `/`, its client-side routes and `/assets/<hashed name>`.
        setup_spa(app)
        # Its manifest, service worker and share target (an installable phone app).
        setup_pwa(app)
    else:
        ops.setup_alone(app)
    return app


def _contexts(plan: RolePlan) -> list[CleanupContext]:
    """The lifecycle contexts of a plan, in their order of start."""
    duties = plan.duties
    contexts: list[CleanupContext] = [fatal_ctx, storage_ctx, duty_locks_ctx]
    # The search index's rows of records indexed before migrations 0012 and 0015.
    if Duty.SWEEPS in duties:
        contexts.append(search_index_ctx)
    # Transcoder, recognizer, object store and the step table (unless injected).
    contexts.append(providers_ctx)
    # The Telegram notifier (when a token is set) before the step actors read it;
    # its session closes after they stopped.
    contexts.append(telegram_ctx)
    if plan.doors:
        # The webhook transport (URL checks at registration, the webhooks' worker);
        # the processes that find a search's words in transcripts.
        contexts += [webhooks_ctx, match_pool_ctx, answerer_ctx]
        # The Wyoming server (`wyoming.enabled`), on the recognizer the providers built.
        contexts.append(wyoming_ctx)
        # The resumable uploads' sweeper (expired uploads' rows and bytes).
        contexts.append(uploads_ctx)
    if plan.step_actors:
        # The describer (its provider) where `done` happens: the describe worker's part.
        contexts.append(describer_ctx)
    # Every declared follow-up's worker this process can have (`followups.registry`),
    # then each duty's workers; they stop after the step actors, so a reply or a
    # description of a step finishing during the stop still lands.
    contexts.append(followups_ctx)
    for duty in dict.fromkeys(followup.duty for followup in FOLLOWUPS):
        if duty in duties:
            contexts.append(duty_ctx(duty, followups_work(duty)))
    if plan.step_actors:
        contexts.append(pipeline_ctx)
    # The watched folders: after the pipeline, so a file taken at start finds it.
    if Duty.WATCH in duties:
        contexts.append(watch_ctx)
    # Telegram polling: starts last, stops first (before the pipeline and the writer).
    if Duty.TELEGRAM_POLLING in duties:
        contexts.append(bot_ctx)
    return contexts
