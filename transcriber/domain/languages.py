"""The spoken language a record is recognized in, and the names of languages.

A record stores the language as the owner asked for it: `auto`, or a short
code (`en`, `ru`, …), one of those the recognizer takes (its `Capabilities`'
`languages`; each provider's table and how it names a language live with the
providers, `providers/recognizers.py`). Pure: no recognizer is loaded to answer.
"""

from __future__ import annotations

from collections.abc import Sequence

AUTO = "auto"


def supported_languages(known: Sequence[str]) -> tuple[str, ...]:
    """`auto` first, then the codes the recognizer takes (`Capabilities.languages`)."""
    return (AUTO, *known)


def configured_language(setting: str) -> str:
    """The language a record that names none is stored with: the `recognizer.language`
    setting, `auto` when empty (the doors and `transcriber transcribe` alike)."""
    return setting.strip().lower() or AUTO


def checked_language(known: Sequence[str], value: str) -> str | None:
    """The language as stored (`ru`, `auto`), None when the recognizer cannot take it
    (`known`: its `Capabilities.languages`)."""
    code = value.strip().lower()
    return code if code in supported_languages(known) else None


# The English names of the spoken languages (openai-whisper's `tokenizer.LANGUAGES`):
# what OpenAI's speech-to-text API answers as `language` ("english", not "en").
LANGUAGE_NAMES: dict[str, str] = {
    "af": "afrikaans", "am": "amharic", "ar": "arabic", "as": "assamese",
    "az": "azerbaijani", "ba": "bashkir", "be": "belarusian", "bg": "bulgarian",
    "bn": "bengali", "bo": "tibetan", "br": "breton", "bs": "bosnian", "ca": "catalan",
    "cs": "czech", "cy": "welsh", "da": "danish", "de": "german", "el": "greek",
    "en": "english", "es": "spanish", "et": "estonian", "eu": "basque", "fa": "persian",
    "fi": "finnish", "fo": "faroese", "fr": "french", "gl": "galician", "gu": "gujarati",
    "ha": "hausa", "haw": "hawaiian", "he": "hebrew", "hi": "hindi", "hr": "croatian",
    "ht": "haitian creole", "hu": "hungarian", "hy": "armenian", "id": "indonesian",
    "is": "icelandic", "it": "italian", "ja": "japanese", "jw": "javanese",
    "ka": "georgian", "kk": "kazakh", "km": "khmer", "kn": "kannada", "ko": "korean",
    "la": "latin", "lb": "luxembourgish", "ln": "lingala", "lo": "lao",
    "lt": "lithuanian", "lv": "latvian", "mg": "malagasy", "mi": "maori",
    "mk": "macedonian", "ml": "malayalam", "mn": "mongolian", "mr": "marathi",
    "ms": "malay", "mt": "maltese", "my": "myanmar", "ne": "nepali", "nl": "dutch",
    "nn": "nynorsk", "no": "norwegian", "oc": "occitan", "pa": "punjabi", "pl": "polish",
    "ps": "pashto", "pt": "portuguese", "ro": "romanian", "ru": "russian",
    "sa": "sanskrit", "sd": "sindhi", "si": "sinhala", "sk": "slovak", "sl": "slovenian",
    "sn": "shona", "so": "somali", "sq": "albanian", "sr": "serbian", "su": "sundanese",
    "sv": "swedish", "sw": "swahili", "ta": "tamil", "te": "telugu", "tg": "tajik",
    "th": "thai", "tk": "turkmen", "tl": "tagalog", "tr": "turkish", "tt": "tatar",
    "uk": "ukrainian", "ur": "urdu", "uz": "uzbek", "vi": "vietnamese", "yi": "yiddish",
    "yo": "yoruba", "zh": "chinese", "yue": "cantonese",
}


def language_name(code: str) -> str:
    """The English name of a spoken language's code (`ru` → `russian`); an unknown
    code (`auto`, a provider's own tag) stays as it is."""
    return LANGUAGE_NAMES.get(code.lower(), code)
