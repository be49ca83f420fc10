"""The web app's API under `/app/` and OpenAI's under `/v1/`: middlewares and routes,
registered by `build_app`.

Middlewares, outermost first: metrics (sees every final status), errors
(one JSON shape; OpenAI's under `/v1/`), the host check (DNS rebinding) and
the same-origin check (hostile pages), rate limit (before any work, before
identity touches the database; per person for a bearer token seen lately, else
per address), the bearer token (one lookup; a new token charged to its owner
after it, a refused one to its address), identity, the record routes' access
check (`web.access`: one `domain.access.may` before any record handler). Every
answer under `/app/`
and `/v1/` is marked private on its way out (`private`: `Cache-Control:
no-store`); `100 Continue` is sent by the upload handlers, after all of these.
"""

from __future__ import annotations

from aiohttp import web

from transcriber.web import (
    access_tokens,
    archive,
    ask,
    ask_conversations,
    edits,
    keys,
    links,
    live_text,
    openai_api,
    openai_translations,
    space_webhooks,
    spaces,
    upload,
    uploads,
    vocabulary,
    voices,
    webhooks,
)
from transcriber.web.access import RECORD, access_middleware, check_record_routes
from transcriber.web.bearer import bearer_middleware, setup_bearer
from transcriber.web.errors import error_middleware
from transcriber.web.identity import USERS, UserDirectory, identity_middleware
from transcriber.web.metrics import metrics_middleware
from transcriber.web.openapi import serve_openapi
from transcriber.web.origin import host_middleware, same_origin_middleware, setup_origin_checks
from transcriber.web.private import setup_private
from transcriber.web.public_links import setup_public_links
from transcriber.web.ratelimit import rate_limit_middleware, setup_rate_limits
from transcriber.web.uploadguard import (
    JSON_SLOTS,
    UPLOAD_SLOTS,
    BodySlots,
    close_unless_continued,
    expect_handler,
)

WEBHOOK = "/app/webhooks/{id}"


def setup_api(app: web.Application) -> None:
    setup_rate_limits(app)
    setup_private(app)
    app.on_response_prepare.append(close_unless_continued)
    app[USERS] = UserDirectory()
    app[UPLOAD_SLOTS] = BodySlots.for_uploads(app[keys.SETTINGS].server)
    app[JSON_SLOTS] = BodySlots.for_json(app[keys.SETTINGS].server)
    setup_origin_checks(app)
    setup_bearer(app)
    openai_api.setup_openai(app)
    uploads.setup_uploads(app)
    app.middlewares.extend([
        metrics_middleware, error_middleware, host_middleware, same_origin_middleware,
        rate_limit_middleware, bearer_middleware, identity_middleware, access_middleware,
    ])
    router = app.router
    # Routes that may take a body answer `Expect: 100-continue` only when they read it
    # (`uploadguard.expect_handler`), after every check above.
    body = {"expect_handler": expect_handler}
    router.add_get("/app/openapi.json", serve_openapi)
    router.add_get("/app/me", archive.me)
    router.add_get("/app/audiorecords", archive.list_records)
    router.add_post("/app/audiorecords", upload.upload, **body)
    router.add_get(RECORD, archive.card)
    router.add_patch(RECORD, edits.patch_record, **body)
    router.add_delete(RECORD, edits.delete_record, **body)
    router.add_patch(f"{RECORD}/transcript", edits.patch_transcript, **body)
    router.add_get("/app/topics", edits.list_topics)
    router.add_get(f"{RECORD}/file", archive.download_file)
    router.add_get(f"{RECORD}/transcript", archive.download_transcript)
    router.add_get(f"{RECORD}/matches", archive.find_in_transcript)
    router.add_post(f"{RECORD}/resume", archive.resume, **body)
    router.add_post(f"{RECORD}/retranscribe", edits.retranscribe, **body)
    # Resumable uploads (tus 1.0): tus clients send OPTIONS and POST to the root.
    router.add_options(uploads.ROOT, uploads.options)
    router.add_post(uploads.ROOT, uploads.create, **body)
    router.add_head(uploads.ITEM, uploads.head)
    router.add_patch(uploads.ITEM, uploads.patch, **body)
    router.add_delete(uploads.ITEM, uploads.terminate, **body)
    router.add_get(live_text.TEXT, live_text.live_text)
    router.add_get("/app/webhooks", webhooks.list_webhooks)
    router.add_post("/app/webhooks", webhooks.create_webhook, **body)
    router.add_delete(WEBHOOK, webhooks.delete_webhook, **body)
    router.add_get(f"{WEBHOOK}/deliveries", webhooks.list_deliveries)
    router.add_post(f"{RECORD}/speakers/{{speaker}}/confirm", voices.confirm_suggestion, **body)
    router.add_post(f"{RECORD}/speakers/{{speaker}}/reject", voices.reject_suggestion, **body)
    router.add_get("/app/voices", voices.list_voices)
    router.add_patch("/app/voices/{voice_id}", voices.rename_voice, **body)
    router.add_delete("/app/voices/{voice_id}", voices.delete_voice, **body)
    router.add_post("/app/voices/{voice_id}/merge", voices.merge_voice, **body)
    router.add_get(f"{RECORD}/links", links.list_links)
    router.add_post(f"{RECORD}/links", links.create_link, **body)
    router.add_delete(f"{RECORD}/links/{{link_id}}", links.revoke_link, **body)
    # The public link's page and downloads (`/s/<secret>`): outside `/app/`, no identity.
    setup_public_links(app)
    router.add_post("/app/ask", ask.ask, **body)
    router.add_get("/app/ask/conversations", ask_conversations.list_conversations)
    router.add_get("/app/ask/conversations/{conversation}", ask_conversations.get_conversation)
    router.add_delete("/app/ask/conversations/{conversation}",
                      ask_conversations.delete_conversation)
    router.add_get("/app/vocabulary", vocabulary.get_vocabulary)
    router.add_put("/app/vocabulary", vocabulary.put_vocabulary, **body)
    router.add_get("/app/spaces/{id}/vocabulary", vocabulary.get_space_vocabulary)
    router.add_put("/app/spaces/{id}/vocabulary", vocabulary.put_space_vocabulary, **body)
    router.add_get("/app/tokens", access_tokens.list_tokens)
    router.add_post("/app/tokens", access_tokens.create_token, **body)
    router.add_delete("/app/tokens/{id}", access_tokens.revoke_token, **body)
    router.add_post("/v1/audio/transcriptions", openai_api.transcriptions, **body)
    router.add_post("/v1/audio/translations", openai_translations.translations, **body)
    router.add_get("/v1/models", openai_api.list_models)
    router.add_get("/v1/models/{model}", openai_api.get_model)
    spaces.add_routes(app)
    space_webhooks.add_routes(app)
    # Every record route names its access action, or the app does not start (checked
    # at start-up, after every module has added its routes).
    app.on_startup.append(check_record_routes)
