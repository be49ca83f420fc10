"""The recognizers this service has, described without loading them.

Each provider's `Capabilities` (ports: the languages it takes, the overlap its
parts need, where it runs, how its speakers are told apart) come from the
settings alone, so a door that runs no recognizer (the web app beside a worker,
the bot) checks a language and estimates progress as the worker would; the
recognizers themselves answer the same `Capabilities` (a test holds them
equal). Also here: each provider's language table and how it names a language
(pure tables: no provider library is imported to answer), and the parsers of
every provider's saved answers, imported only when a worker starts.

This is the one place that switches on `recognizer.provider`; the pipeline and
the pure modules never name a provider (tests/unit/test_provider_names.py).
"""

from __future__ import annotations

from transcriber.ports import AnswerFormat, Capabilities, Recognizer, Runs, SpeakerLabels
from transcriber.settings import Settings
from transcriber.settings.model import RecognizerSettings, SpeechkitSettings

AUTO = "auto"
LOCAL = "local"
SPEECHKIT = "speechkit"
# The faster-whisper model bundled with the service (`[recognizer] model_dir` unset).
BUNDLED_MODEL_NAME = "whisper-base"

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


def whisper_language(language: str | None, default: str) -> str | None:
    """faster-whisper's `language`: None detects it."""
    chosen = language if language is not None else default
    return None if not chosen or chosen == AUTO else chosen


def speechkit_language_codes(language: str | None, default: str) -> list[str]:
    """The request's `languageCode` list: the record's language, else (`auto`)
    the `speechkit.language` setting, the operator's choice for this provider
    and what records stored before languages existed were recognized in."""
    if language and language != AUTO:
        return [SPEECHKIT_CODES.get(language, language)]
    return [default]


def local_capabilities(settings: RecognizerSettings) -> Capabilities:
    """faster-whisper on this host: parts of `part_seconds` cut in pauses, speakers told
    apart here from its word times."""
    return Capabilities(
        provider=LOCAL,
        model=settings.model_dir.name if settings.model_dir else BUNDLED_MODEL_NAME,
        languages=WHISPER_LANGUAGES, max_part_ms=settings.part_seconds * 1000,
        part_overlap_ms=settings.part_overlap_seconds * 1000, runs=Runs.HERE,
        needs_object_store=False, speakers=SpeakerLabels.WORDS,
        # Before this host has measured: about three times the bundled model's 0.063
        # end to end on one hour (docs/recognition.md), as a short record's fixed
        # costs (loading the model, speakers) weigh more; a larger model is slower.
        expected_real_time_factor=0.2)


def speechkit_capabilities(settings: SpeechkitSettings) -> Capabilities:
    """SpeechKit v3 asynchronous recognition: overlapping parts uploaded to a bucket,
    its own speaker labeling."""
    return Capabilities(
        provider=SPEECHKIT, model=settings.model, languages=tuple(sorted(SPEECHKIT_CODES)),
        max_part_ms=settings.max_part_seconds * 1000,
        part_overlap_ms=settings.part_overlap_seconds * 1000, runs=Runs.REMOTE,
        needs_object_store=True, speakers=SpeakerLabels.OWN,
        # Before this host has measured: asynchronous recognition answers in about a
        # tenth of the audio's length, seen through polls 5-10 s apart; kept conservative.
        expected_real_time_factor=0.25)


def configured_capabilities(settings: Settings) -> Capabilities:
    """The capabilities of the recognizer `recognizer.provider` names."""
    if settings.recognizer.provider == SPEECHKIT:
        return speechkit_capabilities(settings.speechkit)
    return local_capabilities(settings.recognizer)


def capabilities_of(recognizer: Recognizer | None, settings: Settings) -> Capabilities:
    """The running recognizer's capabilities, or (a door without one: it runs
    elsewhere) the configured one's."""
    return recognizer.capabilities if recognizer is not None else (
        configured_capabilities(settings))


def model_names(settings: Settings) -> tuple[str, ...]:
    """The models a re-transcription may name: the configured recognizer's own, and
    (local) every folder of `recognizer.models_dir` (its files are checked when it
    loads, not here)."""
    own = configured_capabilities(settings).model
    models_dir = settings.recognizer.models_dir
    if settings.recognizer.provider == SPEECHKIT or models_dir is None:
        return (own,)
    from transcriber.providers.model_folder import scan  # noqa: PLC0415

    return (own, *(m.name for m in scan(models_dir, check_files=False)
                   if m.manifest is not None and m.name != own))


def saved_answer_formats(settings: Settings) -> dict[str, AnswerFormat]:
    """Every provider's answer format, by the name `recognitions.provider` keeps."""
    from transcriber.providers.speechkit import read_results  # noqa: PLC0415
    from transcriber.providers.whisper_answer import read_local_payload  # noqa: PLC0415

    return {
        LOCAL: AnswerFormat(capabilities=local_capabilities(settings.recognizer),
                            parse=read_local_payload),
        SPEECHKIT: AnswerFormat(capabilities=speechkit_capabilities(settings.speechkit),
                                parse=read_results),
    }
