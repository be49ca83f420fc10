"""The bot's English texts, as the tests' senders (no `language_code`) read them."""

from __future__ import annotations

from transcriber.bot import texts
from transcriber.bot.texts import T

__all__ = ["T", "en"]


def en(key: T, **fields: object) -> str:
    return texts.say("en", key, **fields)
