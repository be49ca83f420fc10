"""The public link's page as HTML, and its words in English and Russian (pure).

Server-rendered and read-only: no script at all, one inline style block
allowed by its hash in the page's Content-Security-Policy (`CSP`), nothing
loaded from elsewhere. Every value from the archive (title, names, words) is
escaped. The page names no account, no owner and no other route of the
service: the only addresses it holds are its own link's downloads and audio.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

LANGUAGES = ("en", "ru")

MESSAGES: Mapping[str, Mapping[str, str]] = {
    "en": {
        "untitled": "Transcript",
        "shared": "Shared read-only by link",
        "download_txt": "Download text (TXT)",
        "download_srt": "Download subtitles (SRT)",
        "player": "Recording",
        "not_ready": "The transcript is not ready yet. Open this link again later.",
        "empty": "Nothing was said in this recording.",
        "not_found_title": "Link not found",
        "not_found": "This link does not exist or no longer works. Ask the person who sent "
                     "it for a new one.",
        "limited_title": "Too many requests",
        "limited": "This link was opened too often just now. Try again in a minute.",
        "not_ready_title": "Not ready yet",
        "bad_format_title": "Unknown format",
        "bad_format": "The transcript downloads as TXT or SRT.",
    },
    "ru": {
        "untitled": "Расшифровка",
        "shared": "Открыто по ссылке только для чтения",
        "download_txt": "Скачать текст (TXT)",
        "download_srt": "Скачать субтитры (SRT)",
        "player": "Запись",
        "not_ready": "Расшифровка ещё не готова. Откройте ссылку позже.",
        "empty": "В этой записи ничего не сказано.",
        "not_found_title": "Ссылка не найдена",
        "not_found": "Такой ссылки нет или она больше не действует. Попросите того, "
                     "кто её прислал, сделать новую.",
        "limited_title": "Слишком много запросов",
        "limited": "Ссылку сейчас открывали слишком часто. Попробуйте через минуту.",
        "not_ready_title": "Ещё не готово",
        "bad_format_title": "Неизвестный формат",
        "bad_format": "Расшифровку можно скачать в TXT или SRT.",
    },
}

STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;margin:0 auto;max-width:46rem;"
    "padding:1rem;color:#1b1b1b;background:#fff;overflow-wrap:anywhere}"
    "h1{font-size:1.5rem;margin:.5rem 0}.muted{color:#595959;font-size:.9rem}"
    "audio{width:100%;margin:.5rem 0}nav a{display:inline-block;margin:.25rem 1rem .25rem 0}"
    "ol{list-style:none;padding:0}li{margin:.75rem 0}"
    ".who{font-weight:600;margin-right:.5rem}time{color:#595959;margin-right:.5rem;"
    "font-variant-numeric:tabular-nums}"
    "@media (prefers-color-scheme:dark){body{background:#121212;color:#eee}"
    ".muted,time{color:#aaa}a{color:#8ab4f8}}"
)
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
# No script, no frames, no forms; the style block above by its hash; the player's
# audio from this origin (the link's own path).
CSP = (f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; media-src 'self'; "
       "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


@dataclass(frozen=True, slots=True, kw_only=True)
class PageLine:
    """One spoken line of the page: who (None: a transcript without speakers), when, what."""

    voice: str | None
    time: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PageView:
    title: str
    # The link's own path (`/s/<secret>`): the page's downloads and audio hang under it.
    base: str
    audio: bool
    # None: no transcript yet.
    lines: Sequence[PageLine] | None
    # `2026-12-07 · 12:04 · Anna, S2` (`documents.facts_line`); "" leaves it out.
    facts: str = ""
    # The spoken language (a BCP 47 code) for screen readers; "" when unknown.
    spoken: str = ""


def known(language: str) -> str:
    return language if language in MESSAGES else "en"


def words(language: str) -> Mapping[str, str]:
    return MESSAGES[known(language)]


def _document(language: str, title: str, body: str) -> str:
    return (
        f'<!doctype html>\n<html lang="{known(language)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="robots" content="noindex, nofollow, noarchive">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def render_page(view: PageView, language: str) -> str:
    said = words(language)
    title = view.title.strip() or said["untitled"]
    facts = f'<p class="muted">{escape(view.facts)}</p>' if view.facts else ""
    parts = [f"<header><h1>{escape(title)}</h1>{facts}"
             f'<p class="muted">{escape(said["shared"])}</p></header>']
    if view.audio:
        parts.append(f'<audio controls preload="metadata" aria-label="{escape(said["player"])}"'
                     f' src="{escape(view.base)}/audio"></audio>')
    if view.lines is None:
        parts.append(f"<p>{escape(said['not_ready'])}</p>")
    else:
        parts.append(
            f'<nav><a href="{escape(view.base)}/transcript?format=txt" download>'
            f"{escape(said['download_txt'])}</a>"
            f'<a href="{escape(view.base)}/transcript?format=srt" download>'
            f"{escape(said['download_srt'])}</a></nav>")
        if not view.lines:
            parts.append(f"<p>{escape(said['empty'])}</p>")
        else:
            items = "".join(
                "<li>" + (f'<span class="who">{escape(line.voice)}</span>' if line.voice
                          else "")
                + f"<time>{escape(line.time)}</time><span>{escape(line.text)}</span></li>"
                for line in view.lines)
            spoken = f' lang="{escape(view.spoken)}"' if view.spoken else ""
            parts.append(f"<main{spoken}><ol>{items}</ol></main>")
    return _document(language, title, "".join(parts))


NOTICES = ("not_found", "limited", "not_ready", "bad_format")


def render_notice(language: str, kind: str) -> str:
    """The page of a link that does not open (`not_found`: the same words whatever
    the reason), is rate-limited (`limited`), has no transcript to download yet
    (`not_ready`) or was asked for another format (`bad_format`)."""
    said = words(language)
    return _document(language, said[f"{kind}_title"],
                     f"<h1>{escape(said[f'{kind}_title'])}</h1><p>{escape(said[kind])}</p>")
