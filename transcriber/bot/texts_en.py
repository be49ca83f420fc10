"""What the bot says in English (plain text: nothing is parsed as markup), keyed by `T`;
`tests/unit/bot/test_texts.py` holds it to the Russian one (`texts_ru`), key by key and
field by field."""

from __future__ import annotations

from collections.abc import Mapping

from transcriber.bot.text_keys import T

EN: Mapping[T, str] = {
    T.ACCEPTED: "Accepted, transcribing… I will reply here with the transcript.",
    T.HELP: (
        "Send me a voice message, an audio file or an audio document (up to {limit}) "
        "and I will reply with its transcript. Your recordings also appear in the web "
        "archive.\n\n/status — your last five recordings\n/last — the latest transcript again\n"
        "/ask QUESTION — where your recordings say it\n"
        "/export docx|md|txt|srt — the latest transcript as a document"
    ),
    T.NOT_ALLOWED: (
        "Sorry, this bot transcribes recordings only for the people its owner has listed. "
        "If you should have access, ask the owner to add your Telegram id {user_id}."
    ),
    T.NOT_AUDIO: (
        "I can only transcribe voice messages, audio files and audio documents "
        "(mp3, m4a, ogg, opus, wav, flac, …). Nothing was stored."
    ),
    T.NOT_READABLE: "This file does not contain audio I can read. Nothing was stored.",
    T.EMPTY: "This file is empty. Nothing was stored.",
    T.TOO_LARGE: (
        "This file is larger than {limit}, the most this bot may download. "
        "Please upload it through the web archive instead, or send a shorter or more "
        "compressed recording."
    ),
    T.TOO_LONG: (
        "This recording is longer than {limit}, the longest I transcribe. Nothing was stored. "
        "Please send it in shorter pieces."
    ),
    T.SAMPLE_RATE_TOO_LOW: (
        "This recording is sampled too coarsely to carry speech (below 8 kHz). "
        "Nothing was stored."
    ),
    T.SAMPLE_RATE_TOO_HIGH: (
        "This recording is sampled faster than I take (above {limit} kHz). "
        "Nothing was stored. Please convert it to an ordinary rate such as 48 kHz."
    ),
    T.TOO_MANY_CHANNELS: (
        "This recording has more channels than I take (more than {limit}). "
        "Nothing was stored. Please send a mono or stereo copy."
    ),
    T.QUOTA_EXCEEDED: (
        "Your recordings still waiting to be transcribed already hold {queued} of audio; "
        "with this one they would pass the limit of {limit}. Nothing was stored. "
        "Please send it again when some of them are done."
    ),
    T.NOT_DOWNLOADABLE: "Telegram did not let me download this file. Nothing was stored.",
    T.TRY_AGAIN: (
        "I could not take this recording in right now (a temporary problem). "
        "Please send it again in a few minutes."
    ),
    T.STORAGE_FULL: (
        "The archive has no room for this recording right now. Nothing was stored. "
        "Please send it again later; the service owner has been told."
    ),
    T.EMPTY_TRANSCRIPT: "The recording is transcribed, but no speech was recognised in it.",
    T.QUALITY_UNCLEAR: "⚠ Parts of this recording were unclear: {spans} — listen there.",
    T.QUALITY_UNSURE: "⚠ Parts of this text may be wrong (the recognizer was unsure of "
                      "them): check them against the recording.",
    T.QUALITY_POOR: "⚠ Most of the speech in this recording was unclear, so this text is "
                    "incomplete: {spans}.",
    T.QUALITY_NO_TEXT: "⚠ There is speech in this recording, but none of it could be made "
                       "out.",
    T.TRANSCRIPT_AS_FILE: (
        "The transcript is too long for a message ({chars} characters), "
        "so it is attached as a file."
    ),
    T.HALT_NOTICE: (
        "Sorry, I could not transcribe this recording: {why}. "
        "The service owner has been told and can retry it."
    ),
    T.HALT_STEP_FAILED: (
        "the recording could not be processed (the file may be damaged or not supported)"
    ),
    T.HALT_ATTEMPTS_EXHAUSTED: "transcription kept failing after several attempts",
    T.HALT_STUCK: "transcription took far longer than it should",
    T.HALT_UNKNOWN: "an unexpected problem",
    T.STAGE_UPLOADED: "received, waiting to be prepared",
    T.STAGE_PREPARING: "being prepared",
    T.STAGE_NORMALIZED: "prepared, waiting for recognition",
    T.STAGE_SUBMITTED: "being recognised",
    T.STAGE_TRANSCRIBED: "recognised, finishing",
    T.STAGE_DONE: "done",
    T.STAGE_HALTED: "stopped: {why}",
    T.STATUS_MESSAGE: "Recording: {stage}",
    T.PROGRESS: "{stage}, {percent}%",
    T.PROGRESS_ETA: "{stage}, {percent}%, about {eta} left",
    T.STATUS_HEADER: "Your latest recordings:",
    T.STATUS_LINE: "• {name} — {stage}",
    T.STATUS_NONE: "You have no recordings yet. Send me a voice message or an audio file.",
    T.LAST_NONE: "You have no finished transcript yet.",
    T.UNTITLED: "untitled recording",
    T.COMMAND_START: "What this bot does",
    T.COMMAND_HELP: "How to use it and the size limit",
    T.COMMAND_STATUS: "Your last five recordings",
    T.COMMAND_LAST: "The latest transcript again",
    T.COMMAND_ASK: "Ask your recordings a question",
    T.ASK_EMPTY: "Write the question after the command: /ask what did we decide about the "
                 "supplier?",
    T.ASK_NONE: "Nothing in your recordings answers this.",
    T.ASK_PASSAGE: "[{number}] {title}, {day}, {moment}{speaker}: «{quote}»",
    T.ASK_TOO_BROAD: "The question has a word typed in part that is too short (word*).",
    T.COMMAND_EXPORT: "The latest transcript as a document: docx, md, txt or srt",
    T.COMMAND_LINK: "Take this group's audio into a space: /link SPACE",
    T.COMMAND_UNLINK: "Stop taking this group's audio into its space",
    T.EXPORT_USAGE: ("Send /export with a format: docx, md, txt or srt, and optionally a "
                     "record's id, e.g. /export docx"),
    T.EXPORT_NONE: "There is no such recording of yours.",
    T.EXPORT_NOT_READY: "That recording has no transcript yet.",
    T.MEGABYTES: "{n} MB",
    T.GIGABYTES: "{n} GB",
    T.HOURS: "{n} h",
    T.MINUTES: "{n} min",
    T.SECONDS: "{n} s",
    T.GROUP_HELP: (
        "In a group I transcribe the voice messages and audio sent here (up to {limit}) "
        "into a space of the archive and reply here with the transcript. An editor or "
        "admin of the space links the group with /link SPACE; /unlink stops it.\n\n"
        "/status — the space's last five recordings\n"
        "/ask QUESTION — where the space's recordings say it"
    ),
    T.GROUP_LINKED_TO: "This group files its recordings into «{space}».",
    T.GROUP_NOT_LINKED: (
        "This group is not linked to a space, so I keep nothing sent here. An editor or "
        "admin of a space links it: /link SPACE"
    ),
    T.GROUP_PRIVATE_ONLY: "In a group, /last and /export answer only in a private chat with me.",
    T.GROUP_STATUS_HEADER: "The latest recordings of «{space}»:",
    T.GROUP_STATUS_NONE: "«{space}» has no recordings yet.",
    T.GROUP_MEMBERS_ONLY: "Only the members of «{space}» can ask about its recordings here.",
    T.LINK_USAGE: "Send /link with the space's name, e.g. /link Family",
    T.LINK_IN_PRIVATE: (
        "Send /link SPACE in the group chat you want to link, after adding me there. "
        "Here, in our private chat, your recordings stay your own."
    ),
    T.LINK_NOT_ALLOWED: (
        "Only the people this bot's owner has listed can link a group, and only to a space "
        "where they are an editor or an admin."
    ),
    T.LINK_NO_SPACE: "You have no space of that name.",
    T.LINK_FORBIDDEN: "Only the space's editors and admins can link a group to it.",
    T.LINKED: (
        "Linked: the voice messages and audio sent here become recordings of «{space}», "
        "seen by its members, and I reply here with their transcripts."
    ),
    T.UNLINKED: "Unlinked: I keep nothing sent here any more.",
    T.UNLINK_FORBIDDEN: "Only the space's editors and admins can unlink this group.",
}
