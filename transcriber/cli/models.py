"""`transcriber models list|verify|add PATH`: the operator's models folder.

`list` reads each model's manifest (name, kind, languages, the route that uses it)
without hashing; `verify` hashes every file of every model and exits 1 when one does
not match; `add PATH` copies a folder the operator fetched elsewhere into
`recognizer.models_dir`, writes its manifest from the files' own hashes, and first
shows those hashes for the operator to compare with the publisher's (`--yes` for
scripts that compared them already). Nothing here reaches a network.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from transcriber.cli.exits import EXIT_CONFIG, EXIT_REFUSED
from transcriber.providers.model_folder import (
    GIGAAM_ONNX,
    WHISPER_CT2,
    ModelRefused,
    add_model,
    gigaam_export,
    manifest_of,
    scan,
)
from transcriber.settings import Settings

# GigaAM's published models are Russian; a Whisper model takes every language it knows
# (an empty list).
_DEFAULT_LANGUAGES = {GIGAAM_ONNX: ("ru",), WHISPER_CT2: ()}


def guessed_kind(folder: Path) -> str | None:
    """A CTranslate2 Whisper conversion has `model.bin`; a GigaAM export `*.onnx`."""
    if (folder / "model.bin").is_file():
        return WHISPER_CT2
    if any(folder.glob("*.onnx")):
        return GIGAAM_ONNX
    return None


def _routes_to(settings: Settings) -> dict[str, list[str]]:
    by_model: dict[str, list[str]] = {}
    for language, name in sorted(settings.recognizer.routes.items()):
        by_model.setdefault(name, []).append(language)
    return by_model


def list_command(models_dir: Path, settings: Settings, *, check_files: bool) -> int:
    found = scan(models_dir, check_files=check_files)
    if not found:
        print(f"no models in {models_dir}")
        return 0
    routes = _routes_to(settings)
    refused = 0
    for model in found:
        manifest = model.manifest
        languages = ",".join(manifest.languages) if manifest and manifest.languages else "any"
        kind = manifest.kind if manifest else "?"
        if model.problem is not None:
            state = "REFUSED"
            refused += 1
        else:
            state = "verified" if check_files else "manifest ok"
        routed = ",".join(routes.get(model.name, [])) or "-"
        print(f"{model.name}\t{kind}\t{languages}\troutes: {routed}\t{state}")
        if model.problem is not None:
            print(f"  {model.problem}")
    return EXIT_REFUSED if refused else 0


def add_command(models_dir: Path, args: argparse.Namespace) -> int:
    source = Path(args.path)
    if not source.is_dir():
        print(f"transcriber: {source} is not a folder", file=sys.stderr)
        return EXIT_CONFIG
    kind = args.kind or guessed_kind(source)
    if kind is None:
        print("transcriber: cannot tell the model's kind; give --kind", file=sys.stderr)
        return EXIT_CONFIG
    languages = (tuple(code.strip() for code in args.languages.split(",") if code.strip())
                 if args.languages is not None else _DEFAULT_LANGUAGES[kind])
    try:
        manifest = manifest_of(source, name=args.name or source.name, kind=kind,
                               languages=languages)
        if kind == GIGAAM_ONNX:  # refused now, not when a route first loads it
            gigaam_export(manifest.files, folder=source.name)
    except ModelRefused as exc:
        print(f"transcriber: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    print(f"{manifest.name} ({kind}, languages: {','.join(languages) or 'any'}):")
    for file_name, digest in manifest.files.items():
        print(f"  {digest}  {file_name}")
    if not args.yes:
        print("Compare these SHA-256 with the ones the publisher gives "
              "(docs/recognition.md). Do they match? [y/N] ", end="", flush=True)
        if sys.stdin.readline().strip().lower() not in {"y", "yes"}:
            print("transcriber: not added", file=sys.stderr)
            return EXIT_REFUSED
    try:
        target = add_model(models_dir, source, manifest)
    except ModelRefused as exc:
        print(f"transcriber: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    print(f"added {manifest.name} to {target.parent}; route a language to it with "
          f"recognizer.routes, e.g. {{\"ru\" = \"{manifest.name}\"}}")
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    models_dir = settings.recognizer.models_dir
    if models_dir is None:
        print("transcriber: recognizer.models_dir is not set", file=sys.stderr)
        return EXIT_CONFIG
    if args.models_command == "add":
        return add_command(models_dir, args)
    return list_command(models_dir, settings,
                        check_files=args.models_command == "verify")
