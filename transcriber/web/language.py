"""The spoken language a person asks for: checked against the active recognizer."""

from __future__ import annotations

from aiohttp import web

from transcriber.domain.languages import checked_language, configured_language, supported_languages
from transcriber.providers.recognizers import capabilities_of, model_names
from transcriber.web import keys
from transcriber.web.errors import bad_request


def active_provider(app: web.Application) -> str:
    recognizer = app.get(keys.RECOGNIZER)
    return recognizer.provider if recognizer is not None else (
        app[keys.SETTINGS].recognizer.provider)


def active_languages(app: web.Application) -> tuple[str, ...]:
    """The languages the active recognizer takes (the configured one's where this
    process runs none)."""
    return capabilities_of(app.get(keys.RECOGNIZER), app[keys.SETTINGS]).languages


def check_language(app: web.Application, value: str | None) -> str | None:
    """The language as stored (None: not asked for); 400 with the list for an unknown one."""
    if value is None:
        return None
    known = active_languages(app)
    code = checked_language(known, value)
    if code is None:
        raise bad_request("language must be one of: " + ", ".join(supported_languages(known)))
    return code


def default_language(app: web.Application) -> str:
    """`recognizer.language`, `auto` when empty."""
    return configured_language(app[keys.SETTINGS].recognizer.language)


def check_model(app: web.Application, value: object) -> str | None:
    """The model a re-transcription names (None: the routes choose); 400 with the list
    for one this service does not have: the active recognizer's own, and the models
    folder's (`recognizers.model_names`)."""
    if value is None:
        return None
    settings = app[keys.SETTINGS]
    active = capabilities_of(app.get(keys.RECOGNIZER), settings).model
    known = tuple(dict.fromkeys((active, *model_names(settings))))
    if not isinstance(value, str) or value not in known:
        raise bad_request("model must be one of: " + ", ".join(known))
    return value
