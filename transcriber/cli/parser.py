"""The argument parser of `transcriber`, in one place.

`--config FILE` is accepted before the command (`transcriber --config F
migrate`) and after it (`transcriber migrate --config F`), as the contract
writes it. Nothing here imports the service: `--help` answers at once.
"""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path

from transcriber.domain.access import SPACE_NAME_MAX, SPACE_ROLES
from transcriber.domain.text import LoginRefused, canonical_login, text_problem
from transcriber.domain.tokens import EXPIRES_DAYS_MAX, SCOPES, name_problem
from transcriber.domain.transcript_formats import BINARY_FORMATS, FORMATS

# `transcriber serve --role` (`service.roles.Role`; the parser imports nothing of the
# service, so `--help` answers at once).
ROLES = ("all", "web", "worker")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _speakers(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 8:
        raise argparse.ArgumentTypeError("must be 1 to 8")
    return value


def _login(text: str) -> str:
    try:
        return canonical_login(text)
    except LoginRefused as exc:
        raise argparse.ArgumentTypeError(f"the login {exc}") from None


def _token_name(text: str) -> str:
    problem = name_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"the name {problem}")
    return text.strip()


def _expiry_days(text: str) -> int:
    value = int(text)
    if not 1 <= value <= EXPIRES_DAYS_MAX:
        raise argparse.ArgumentTypeError(f"must be 1 to {EXPIRES_DAYS_MAX}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not 0.1 <= value <= 3600:
        raise argparse.ArgumentTypeError("must be 0.1 to 3600 seconds")
    return value


def _mebibytes(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 4096:
        raise argparse.ArgumentTypeError("must be 1 to 4096")
    return value


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError("must be in [0, 1)")
    return value


def _config_options(*, top_level: bool) -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    # The command's own --config must not overwrite one given before the command
    # with its default, hence SUPPRESS below the top level.
    options.add_argument(
        "--config", type=Path, metavar="FILE",
        default=None if top_level else argparse.SUPPRESS,
        help="TOML settings file (default: $TRANSCRIBER_CONFIG or none)")
    return options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="transcriber", description="The transcriber archive and its pipeline.",
        parents=[_config_options(top_level=True)])
    common = [_config_options(top_level=False)]
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", parents=common,
                           help="migrate, then serve HTTP and run the pipeline")
    serve.add_argument(
        "--role", choices=ROLES, default="all",
        help="all: everything in one process (default); web: the HTTP doors and the "
             "Telegram bot, no step actors; worker: the step actors and the describer, "
             "with only /healthz, /readyz and /metrics on its port")
    sub.add_parser("migrate", parents=common, help="apply pending migrations and exit")
    sub.add_parser("status", parents=common, help="records by stage and halt reason")
    resume = sub.add_parser("resume", parents=common,
                            help="resume a halted record (event origin human)")
    resume.add_argument("record_id", help="the record's id")
    describe = sub.add_parser(
        "describe", parents=common,
        help="write the title, brief and topics of finished records now (never a field a "
             "person set)")
    which = describe.add_mutually_exclusive_group(required=True)
    which.add_argument("record_id", nargs="?", default=None, help="the record's id")
    which.add_argument("--all", action="store_true", help="every finished record")
    describe.add_argument("--force-auto", action="store_true",
                          help="also replace fields the describer wrote before (default: "
                               "fill only fields nobody set)")
    ask = sub.add_parser(
        "ask", parents=common,
        help="a question put to a person's recordings: where it was said (and, with "
             "ask.provider = openai, a short answer citing it)")
    ask.add_argument("question", help="in any words, English or Russian")
    ask.add_argument("--login", type=_login, default=None, metavar="LOGIN",
                     help="whose recordings (default: server.anonymous_user)")
    ask.add_argument("--from", dest="date_from", type=date.fromisoformat, default=None,
                     metavar="DAY", help="records from this day (YYYY-MM-DD, UTC)")
    ask.add_argument("--to", dest="date_to", type=date.fromisoformat, default=None,
                     metavar="DAY", help="records up to this day, included")
    ask.add_argument("--json", action="store_true", help="print POST /app/ask's answer")
    transcribe = sub.add_parser(
        "transcribe", parents=common,
        help="accept files, run the pipeline in-process, print the transcripts")
    transcribe.add_argument("files", nargs="+", type=Path, metavar="FILE")
    # The transcripts are printed: no format that is not text.
    transcribe.add_argument("--format", choices=[f for f in FORMATS if f not in BINARY_FORMATS],
                            default="txt", help="transcript format (default: txt)")
    transcribe.add_argument("--owner", type=_login, default=None, metavar="LOGIN",
                            help="whose records they become (default: server.anonymous_user)")
    transcribe.add_argument("--speakers", type=_speakers, default=None, metavar="N",
                            help="how many speakers each file has (1-8; 1: not told apart; "
                                 "default: found by listening)")
    transcribe.add_argument("--diarization", choices=("auto", "on", "off"), default=None,
                            help="tell speakers apart (default: recognizer.diarization)")
    transcribe.add_argument("--language", default=None, metavar="L",
                            help="the spoken language: auto (detected) or a code such as "
                                 "en, ru (default: recognizer.language, else auto)")
    _add_maintenance(sub, common)
    voices = sub.add_parser("voices", parents=common, help="known voices (biometric data)")
    voices_sub = voices.add_subparsers(dest="voices_command", required=True)
    purge = voices_sub.add_parser(
        "purge", parents=common,
        help="delete every voice embedding: the profiles and each record's speakers' prints "
             "(of one user with LOGIN, else of everybody)")
    purge.add_argument("login", type=_login, nargs="?", default=None, metavar="LOGIN",
                       help="the user whose voices go (default: everybody's)")
    _add_models(sub, common)
    _add_tokens(sub, common)
    _add_spaces(sub, common)
    _add_upload(sub.add_parser(
        "upload", parents=common,
        help="send files to a transcriber server (a client: nothing runs here); with "
             "--wait, write or print their transcripts"))
    _add_loadtest(sub.add_parser(
        "loadtest", parents=common,
        help="the real pipeline with simulated steps on a throwaway archive; "
             "checks its invariants (exit 1 when one is broken)"))
    return parser


def _add_maintenance(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                     common: list[argparse.ArgumentParser]) -> None:
    backup = sub.add_parser(
        "backup", parents=common,
        help="copy the live archive (database snapshot, its files, a manifest) into DEST")
    backup.add_argument("dest", type=Path, metavar="DEST", help="a new folder")
    backup.add_argument("--json", action="store_true", help="print the manifest as JSON")
    restore = sub.add_parser(
        "restore", parents=common,
        help="restore the backup SRC into the (empty, unused) data folder")
    restore.add_argument("src", type=Path, metavar="SRC", help="a folder made by backup")
    verify = sub.add_parser(
        "verify", parents=common,
        help="check a data folder (or a backup): integrity, foreign keys, files, search "
             "(exit 1 with a list when something is wrong)")
    verify.add_argument("folder", type=Path, nargs="?", default=None, metavar="FOLDER",
                        help="the folder to check (default: storage.data_dir)")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    move = sub.add_parser(
        "move-to", parents=common,
        help="copy the SQLite archive (rows, and with --files s3 its files) into PostgreSQL "
             "and the bucket, then check the copy (run again after an interruption: it goes "
             "on where it stopped; exit 1 with a list when the copy differs)")
    move.add_argument("--database-url", required=True, metavar="URL",
                      help="the PostgreSQL database, postgresql://user@host/name (the "
                           "password from $PGPASSWORD keeps it out of the process list)")
    move.add_argument("--files", choices=("s3",), default=None,
                      help="s3: also copy the data folder's files into the bucket of the "
                           "s3.* settings (default: the files stay where they are)")
    move.add_argument("--json", action="store_true", help="print the report as JSON")


def _add_tokens(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                common: list[argparse.ArgumentParser]) -> None:
    token = sub.add_parser("token", parents=common,
                           help="personal access tokens (Authorization: Bearer tx_...)")
    actions = token.add_subparsers(dest="action", required=True)
    create = actions.add_parser(
        "create", parents=common,
        help="make a token for LOGIN; prints it once, alone, on stdout")
    create.add_argument("login", type=_login, metavar="LOGIN")
    create.add_argument("--name", type=_token_name, default="",
                        help="what it is for, shown in lists (at most 100 characters)")
    create.add_argument("--scope", choices=SCOPES, default="write",
                        help="read: GET only; write: everything (default: write)")
    create.add_argument("--expires-days", type=_expiry_days, default=None, metavar="N",
                        help="refused after N days (default: never expires)")
    listing = actions.add_parser(
        "list", parents=common, help="tokens of LOGIN, or everybody's (never the tokens)")
    listing.add_argument("login", type=_login, nargs="?", default=None, metavar="LOGIN")
    revoke = actions.add_parser("revoke", parents=common,
                                help="revoke a token: refused from its next request")
    revoke.add_argument("token_id", metavar="TOKEN_ID", help="its id, as list shows it")


def _space_name(text: str) -> str:
    name = text.strip()
    problem = text_problem(name) if name else "is empty"
    if problem is None and len(name) > SPACE_NAME_MAX:
        problem = f"is longer than {SPACE_NAME_MAX} characters"
    if problem is not None:
        raise argparse.ArgumentTypeError(f"the name {problem}")
    return name


def _add_spaces(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                common: list[argparse.ArgumentParser]) -> None:
    space = sub.add_parser("space", parents=common,
                           help="spaces: records shared by their members (docs/sharing.md)")
    actions = space.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", parents=common,
                                help="make the space NAME with LOGIN as its first admin")
    create.add_argument("name", type=_space_name, metavar="NAME")
    create.add_argument("--admin", type=_login, required=True, metavar="LOGIN")
    add = actions.add_parser("add", parents=common,
                             help="add LOGIN to the space NAME, or change their role")
    add.add_argument("name", type=_space_name, metavar="NAME")
    add.add_argument("login", type=_login, metavar="LOGIN")
    add.add_argument("--role", choices=SPACE_ROLES, default="viewer",
                     help="viewer: see; editor: also correct; admin: also members and "
                          "deleting (default: viewer)")
    remove = actions.add_parser(
        "remove", parents=common,
        help="remove LOGIN from the space NAME (their records there leave it with them)")
    remove.add_argument("name", type=_space_name, metavar="NAME")
    remove.add_argument("login", type=_login, metavar="LOGIN")
    actions.add_parser("list", parents=common, help="every space with its members")


def _add_upload(upload: argparse.ArgumentParser) -> None:
    upload.add_argument("files", nargs="+", type=Path, metavar="FILE")
    upload.add_argument("--server", default=None, metavar="URL",
                        help="the server, e.g. https://transcriber.example "
                             "(default: $TRANSCRIBER_SERVER_URL)")
    upload.add_argument("--token", default=None, metavar="T",
                        help="a personal access token (default: $TRANSCRIBER_TOKEN; the "
                             "variable keeps it out of the process list)")
    upload.add_argument("--language", default=None, metavar="L",
                        help="the spoken language: auto or a code (default: the server's)")
    upload.add_argument("--space", default=None, metavar="ID",
                        help="file the records into this space (its id, GET /app/spaces); "
                             "an empty value: your own (default: your default space)")
    upload.add_argument("--wait", action="store_true",
                        help="follow each record to done, then write or print its transcript")
    upload.add_argument("--format", choices=FORMATS, default="txt",
                        help="transcript format with --wait (default: txt; docx only "
                             "with --output)")
    upload.add_argument("--output", type=Path, default=None, metavar="DIR",
                        help="with --wait, write each transcript to DIR/<name>.<format> "
                             "instead of printing it (files sharing a name: <name>-2, "
                             "<name>-3, in the order given)")
    upload.add_argument("--force", action="store_true",
                        help="overwrite files in --output (default: refuse before "
                             "uploading when one exists)")
    upload.add_argument("--insecure", action="store_true",
                        help="send the token over plain http:// to another machine "
                             "(default: refused; loopback is always allowed)")
    upload.add_argument("--timeout", type=_seconds, default=120.0, metavar="SECONDS",
                        help="the longest one answer of the server may take to arrive "
                             "whole, and an upload's body may stay unread (default: 120)")
    upload.add_argument("--max-transcript-mib", type=_mebibytes, default=64, metavar="N",
                        help="refuse a transcript or card larger than N MiB (default: 64)")


def _add_loadtest(load: argparse.ArgumentParser) -> None:
    load.add_argument("--records", type=_positive, default=1000, metavar="N",
                      help="records to push through (default: 1000)")
    load.add_argument("--workers", type=_positive, default=8, metavar="K",
                      help="step actors (default: 8)")
    load.add_argument("--json", action="store_true", help="print one JSON object")
    load.add_argument("--keep", action="store_true",
                      help="keep the temporary data folder (its path is printed)")
    load.add_argument("--failure-share", type=_share, default=0.05, metavar="F",
                      help="share of step runs that fail transiently (default: 0.05)")
    load.add_argument("--defer-share", type=_share, default=0.05, metavar="D",
                      help="share of step runs that defer (default: 0.05)")
    load.add_argument("--step-ms", type=float, default=4.0, metavar="MS",
                      help="a simulated step takes 0..MS milliseconds (default: 4)")
    load.add_argument("--seed", type=int, default=None, help="seed of the simulation")
    load.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                      help="give up (and fail) after this long (default: 300)")
    load.add_argument("--database-url", default=None, metavar="URL",
                      help="run on PostgreSQL: throwaway databases made beside URL's "
                           "(CREATEDB needed), its baseline raw_asyncpg")


def _add_models(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                common: list[argparse.ArgumentParser]) -> None:
    models = sub.add_parser("models", parents=common,
                            help="the operator's models folder (recognizer.models_dir)")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    models_sub.add_parser("list", parents=common,
                          help="each model: kind, languages, route, manifest read")
    models_sub.add_parser("verify", parents=common,
                          help="hash every file of every model against its manifest "
                               "(exit 1 when one does not match)")
    add = models_sub.add_parser(
        "add", parents=common,
        help="copy a model folder in and write its manifest from the files' hashes, "
             "after you compare them with the publisher's")
    add.add_argument("path", metavar="PATH", help="the model's folder")
    add.add_argument("--name", default=None, help="the model's name (default: the folder's)")
    add.add_argument("--kind", choices=("whisper-ct2", "gigaam-onnx"), default=None,
                     help="default: found from the files (model.bin or *.onnx)")
    add.add_argument("--languages", default=None, metavar="L,L",
                     help="its languages (default: ru for GigaAM, any for Whisper)")
    add.add_argument("--yes", action="store_true",
                     help="do not ask: the hashes were compared already")
