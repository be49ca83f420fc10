"""Which spoken languages each recognizer accepts, and how SpeechKit names them.

A record stores the language as the owner asked for it: `auto`, or a short
code (`en`, `ru`, …). The local recognizer (faster-whisper) takes the short
code as it is; SpeechKit wants its own `languageCode` (`ru-RU`), mapped here.
Pure tables: no provider is loaded to answer.
"""

from __future__ import annotations

import orjson

AUTO = "auto"

# faster-whisper's own list (faster_whisper.tokenizer), copied so that
# checking an upload's language never loads the model's library.
WHISPER_LANGUAGES: tuple[str, ...] = (
    "af", "am", "ar", "as", "az", "ba", "be", "bg", "bn", "bo", "br", "bs", "ca", "cs", "cy",
    "da", "de", "el", "en", "es", "et", "eu", "fa", "fi", "fo", "fr", "gl", "gu", "ha", "haw",
    "he", "hi", "hr", "ht", "hu", "hy", "id", "is", "it", "ja", "jw", "ka", "kk", "km", "kn",
    "ko", "la", "lb", "ln", "lo", "lt", "lv", "mg", "mi", "mk", "ml", "mn", "mr", "ms", "mt",
    "my", "ne", "nl", "nn", "no", "oc", "pa", "pl", "ps", "pt", "ro", "ru", "sa", "sd", "si",
    "sk", "sl", "sn", "so", "sq", "sr", "su", "sv", "sw", "ta", "te", "tg", "th", "tk", "tl",
    "tr", "tt", "uk", "ur", "uz", "vi", "yi", "yo", "zh", "yue",
)

# SpeechKit v3's recognition languages, by the short code the archive stores.
SPEECHKIT_CODES: dict[str, str] = {
    "de": "de-DE", "en": "en-US", "es": "es-ES", "fi": "fi-FI", "fr": "fr-FR", "he": "he-HE",
    "it": "it-IT", "kk": "kk-KZ", "nl": "nl-NL", "pl": "pl-PL", "pt": "pt-PT", "ru": "ru-RU",
    "sv": "sv-SE", "tr": "tr-TR", "uz": "uz-UZ",
}


def supported_languages(provider: str) -> tuple[str, ...]:
    """`auto` first, then the provider's codes; a provider not listed here
    (a test's fake) is taken to understand what the local one does."""
    if provider == "speechkit":
        return (AUTO, *sorted(SPEECHKIT_CODES))
    return (AUTO, *WHISPER_LANGUAGES)


def configured_language(setting: str) -> str:
    """The language a record that names none is stored with: the `recognizer.language`
    setting, `auto` when empty (the doors and `transcriber transcribe` alike)."""
    return setting.strip().lower() or AUTO


def checked_language(provider: str, value: str) -> str | None:
    """The language as stored (`ru`, `auto`), None when the provider cannot take it."""
    code = value.strip().lower()
    return code if code in supported_languages(provider) else None


def speechkit_language_codes(language: str | None, default: str) -> list[str]:
    """The request's `languageCode` list: the record's language, else (`auto`)
    the `speechkit.language` setting, the operator's choice for this provider
    and what records stored before languages existed were recognized in."""
    if language and language != AUTO:
        return [SPEECHKIT_CODES.get(language, language)]
    return [default]


def whisper_language(language: str | None, default: str) -> str | None:
    """faster-whisper's `language`: None detects it."""
    chosen = language if language is not None else default
    return None if not chosen or chosen == AUTO else chosen


def reported_language(payload: bytes) -> str | None:
    """The language a saved answer says it heard (the local recognizer's
    `language`); None when the answer does not say."""
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    language = data.get("language") if isinstance(data, dict) else None
    return language if isinstance(language, str) and 0 < len(language) <= 16 else None


# Whisper's English names of its languages (openai-whisper's `tokenizer.LANGUAGES`):
# what OpenAI's speech-to-text API answers as `language` ("english", not "en").
WHISPER_LANGUAGE_NAMES: dict[str, str] = {
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
    code (`auto`, a SpeechKit tag) stays as it is."""
    return WHISPER_LANGUAGE_NAMES.get(code.lower(), code)
