"""Everything the bot says, in one place (plain text: nothing is parsed as markup)."""

from __future__ import annotations

from transcriber.stages import HaltReason

ACCEPTED = "Accepted, transcribing… I will reply here with the transcript."
HELP = (
    "Send me a voice message, an audio file or an audio document (up to {limit}) "
    "and I will reply with its transcript. Your recordings also appear in the web archive."
)
NOT_ALLOWED = (
    "Sorry, this bot transcribes recordings only for the people its owner has listed. "
    "If you should have access, ask the owner to add your Telegram id {user_id}."
)
NOT_AUDIO = (
    "I can only transcribe voice messages, audio files and audio documents "
    "(mp3, m4a, ogg, opus, wav, flac, …). Nothing was stored."
)
NOT_READABLE = "This file does not contain audio I can read. Nothing was stored."
EMPTY = "This file is empty. Nothing was stored."
TOO_LARGE = (
    "This file is larger than {limit}, the most a Telegram bot may download. "
    "Please upload it through the web archive instead, or send a shorter or more "
    "compressed recording."
)
TOO_LONG = (
    "This recording is longer than {limit}, the longest I transcribe. Nothing was stored. "
    "Please send it in shorter pieces."
)
SAMPLE_RATE_TOO_LOW = (
    "This recording is sampled too coarsely to carry speech (below 8 kHz). Nothing was stored."
)
NOT_DOWNLOADABLE = "Telegram did not let me download this file. Nothing was stored."
TRY_AGAIN = (
    "I could not take this recording in right now (a temporary problem). "
    "Please send it again in a few minutes."
)
STORAGE_FULL = (
    "The archive has no room for this recording right now. Nothing was stored. "
    "Please send it again later; the service owner has been told."
)
EMPTY_TRANSCRIPT = "The recording is transcribed, but no speech was recognised in it."
TRANSCRIPT_AS_FILE = (
    "The transcript is too long for a message ({chars} characters), so it is attached as a file."
)

_HALTS = {
    HaltReason.STEP_FAILED: "the recording could not be processed (the file may be damaged "
                            "or not supported)",
    HaltReason.ATTEMPTS_EXHAUSTED: "transcription kept failing after several attempts",
    HaltReason.STUCK: "transcription took far longer than it should",
}


def halt_notice(reason: HaltReason) -> str:
    why = _HALTS.get(reason, "an unexpected problem")
    return (
        f"Sorry, I could not transcribe this recording: {why}. "
        "The service owner has been told and can retry it."
    )


def megabytes(size_bytes: int) -> str:
    return f"{size_bytes / (1024 * 1024):g} MB"


def audio_refused(refusal: str, max_seconds: int) -> str:
    """The answer to readable audio refused at intake (`intake.Refusal`)."""
    if refusal == "too_long":
        return TOO_LONG.format(limit=hours(max_seconds))
    return SAMPLE_RATE_TOO_LOW


def hours(seconds: int) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:g} s"
