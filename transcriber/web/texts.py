"""Error messages the API words in the asker's language: English and Russian catalogues,
picked by the request's `Accept-Language` (the first language of the two it prefers,
English when it names neither).

Most error messages are English only (an API client reads the `code`); the few
written here are the ones a person meets while typing, shown as they come by
the web app and the command-line client.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from transcriber.domain.search import PREFIX_MIN, PREFIXES_MAX

LANGUAGES = ("en", "ru")

MESSAGES: Mapping[str, Mapping[str, str]] = {
    "en": {
        "prefix_too_short": f"a word typed in part (word*) needs at least {PREFIX_MIN} "
                            "letters before the *",
        "too_many_prefixes": f"at most {PREFIXES_MAX} words typed in part (word*) "
                             "in one search",
    },
    "ru": {
        "prefix_too_short": f"перед * нужно не меньше {PREFIX_MIN} букв слова (слово*)",
        "too_many_prefixes": f"в одном поиске не больше {PREFIXES_MAX} слов с * "
                             "(слово*)",
    },
}


def language_of(request: web.BaseRequest) -> str:
    """The catalogue to answer in: the preferred of `LANGUAGES` in `Accept-Language`."""
    chosen: list[tuple[float, int, str]] = []
    for at, part in enumerate(request.headers.get("Accept-Language", "").split(",")[:32]):
        tag, _, params = part.strip().partition(";")
        base = tag.strip().lower().split("-")[0]
        if base not in LANGUAGES:
            continue
        weight = 1.0
        if params.strip().startswith("q="):
            try:
                weight = float(params.strip()[2:])
            except ValueError:
                continue
        if weight > 0:
            chosen.append((-weight, at, base))
    return min(chosen)[2] if chosen else "en"


def message(language: str, key: str) -> str:
    return MESSAGES[language if language in MESSAGES else "en"][key]
