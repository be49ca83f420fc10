"""The operator's models folder: one folder per model, checked before it loads.

`recognizer.models_dir` holds models the operator fetched elsewhere (the service
never downloads one, docs/recognition.md "Models from a folder"). Each model's folder
carries `manifest.json`:

    {"name": "gigaam-v3", "kind": "gigaam-onnx", "languages": ["ru"],
     "files": {"v3_ctc.onnx": "<sha256>", "v3_vocab.txt": "<sha256>"}}

A `gigaam-onnx` folder holds exactly one of GigaAM v3's exports (CTC, RNN-T, their e2e
forms, full or int8), told from its file names (`gigaam_export`).

Every listed file's SHA-256 is computed and compared before the model is handed to its
loader; a file missing, changed or not listed (beside the manifest) refuses the whole
folder with a message naming the file, so a half-copied or tampered model never loads.
`add_model` copies a folder in and writes its manifest from the files' own hashes (the
operator compares them with the publisher's before confirming: `transcriber models add`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from transcriber.core.errors import TranscriberError
from transcriber.core.hashing import sha256_of

MANIFEST = "manifest.json"
WHISPER_CT2 = "whisper-ct2"
GIGAAM_ONNX = "gigaam-onnx"
KINDS = (WHISPER_CT2, GIGAAM_ONNX)
_HEX = frozenset("0123456789abcdef")


class ModelRefused(TranscriberError):
    """A model folder that must not be loaded: no manifest, a bad one, or a file that
    does not match it (the message names the file, never its contents)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelManifest:
    """A model folder's `manifest.json`, read and checked for shape."""

    name: str
    kind: str
    languages: tuple[str, ...]
    files: Mapping[str, str]

    @classmethod
    def from_json(cls, data: Any, *, folder: str) -> ModelManifest:
        """The manifest, or `ModelRefused` saying what is wrong with it."""
        if not isinstance(data, dict):
            raise ModelRefused(f"{folder}/{MANIFEST} is not a JSON object")
        name, kind = data.get("name"), data.get("kind")
        languages, files = data.get("languages"), data.get("files")
        if not isinstance(name, str) or not name or "/" in name:
            raise ModelRefused(f"{folder}/{MANIFEST}: `name` must be a folder-like name")
        if kind not in KINDS:
            raise ModelRefused(f"{folder}/{MANIFEST}: `kind` must be one of {', '.join(KINDS)}")
        if not isinstance(languages, list) or not all(
                isinstance(code, str) and 0 < len(code) <= 16 for code in languages):
            raise ModelRefused(f"{folder}/{MANIFEST}: `languages` must be a list of codes")
        if not isinstance(files, dict) or not files:
            raise ModelRefused(f"{folder}/{MANIFEST}: `files` must name every file")
        for file_name, digest in files.items():
            if not _safe_name(file_name):
                raise ModelRefused(f"{folder}/{MANIFEST}: file name {file_name!r} leaves "
                                   "the folder")
            if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HEX):
                raise ModelRefused(f"{folder}/{MANIFEST}: {file_name} needs a lowercase "
                                   "SHA-256")
        return cls(name=name, kind=kind, languages=tuple(languages), files=dict(files))

    def to_json(self) -> bytes:
        return orjson.dumps({"name": self.name, "kind": self.kind,
                             "languages": list(self.languages),
                             "files": dict(sorted(self.files.items()))},
                            option=orjson.OPT_INDENT_2)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFolder:
    """One model folder as found: its manifest (None when unreadable) and, once
    checked, why it is refused (None: verified)."""

    folder: Path
    manifest: ModelManifest | None
    problem: str | None

    @property
    def name(self) -> str:
        return self.manifest.name if self.manifest else self.folder.name

    @property
    def verified(self) -> bool:
        return self.manifest is not None and self.problem is None


@dataclass(frozen=True, slots=True, kw_only=True)
class GigaamExport:
    """Which of GigaAM v3's ONNX exports a `gigaam-onnx` folder holds: onnx-asr's name
    for it and its quantization (None: the full-precision files)."""

    model: str
    quantization: str | None


# GigaAM v3's exports as onnx-asr 0.12 finds them in a folder (its `v?` read as `v3`):
# the model files (`{q}`: "" or ".int8") and the vocabulary. The RNN-T exports are three
# models (encoder, prediction network, joint); the e2e ones write punctuation and
# capitals.
GIGAAM_EXPORTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("gigaam-v3-ctc", ("v3_ctc{q}.onnx",), "v3_vocab.txt"),
    ("gigaam-v3-rnnt", ("v3_rnnt_encoder{q}.onnx", "v3_rnnt_decoder{q}.onnx",
                        "v3_rnnt_joint{q}.onnx"), "v3_vocab.txt"),
    ("gigaam-v3-e2e-ctc", ("v3_e2e_ctc{q}.onnx",), "v3_e2e_ctc_vocab.txt"),
    ("gigaam-v3-e2e-rnnt", ("v3_e2e_rnnt_encoder{q}.onnx", "v3_e2e_rnnt_decoder{q}.onnx",
                            "v3_e2e_rnnt_joint{q}.onnx"), "v3_e2e_rnnt_vocab.txt"),
)
GIGAAM_QUANTIZATIONS: tuple[str | None, ...] = (None, "int8")


def gigaam_export(files: Iterable[str], *, folder: str) -> GigaamExport:
    """Pure: the one GigaAM export whose files are all among `files` (top level), or
    `ModelRefused`: none, or more than one (onnx-asr would pick by pattern, so which
    model answers must not depend on what else lies in the folder)."""
    present = set(files)
    found = [GigaamExport(model=model, quantization=quantization)
             for model, patterns, vocab in GIGAAM_EXPORTS
             for quantization in GIGAAM_QUANTIZATIONS
             if vocab in present and all(
                 pattern.format(q=f".{quantization}" if quantization else "") in present
                 for pattern in patterns)]
    if not found:
        raise ModelRefused(f"{folder} holds no GigaAM v3 export (v3_ctc.onnx, or "
                           "v3_rnnt_encoder/decoder/joint.onnx, or their e2e or .int8 "
                           "forms, with their vocabulary)")
    if len(found) > 1:
        named = ", ".join(e.model + (f" {e.quantization}" if e.quantization else "")
                          for e in found)
        raise ModelRefused(f"{folder} holds more than one GigaAM export ({named}): "
                           "keep one per folder")
    return found[0]


def _safe_name(name: object) -> bool:
    """A relative path inside the folder (sub-folders allowed, no `..`, not absolute)."""
    if not isinstance(name, str) or not name or name == MANIFEST or "\\" in name:
        return False
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts


def read_manifest(folder: Path) -> ModelManifest:
    """The folder's manifest (shape checked; the files are not read)."""
    try:
        data = orjson.loads((folder / MANIFEST).read_bytes())
    except FileNotFoundError:
        raise ModelRefused(f"{folder.name} has no {MANIFEST}") from None
    except orjson.JSONDecodeError:
        raise ModelRefused(f"{folder.name}/{MANIFEST} is not valid JSON") from None
    manifest = ModelManifest.from_json(data, folder=folder.name)
    if manifest.name != folder.name:
        raise ModelRefused(f"{folder.name}/{MANIFEST} names the model {manifest.name!r}; "
                           "the folder must carry the model's name")
    return manifest


def _present_files(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*")
            if path.is_file() and path.name != MANIFEST}


def verify_folder(folder: Path) -> ModelManifest:
    """The manifest of a folder whose every file matches it, else `ModelRefused`
    naming the first file that does not (missing, changed, or not listed)."""
    manifest = read_manifest(folder)
    present = _present_files(folder)
    for file_name in sorted(present - set(manifest.files)):
        # A file no manifest vouches for could be read by a loader that globs.
        raise ModelRefused(f"{folder.name}/{file_name} is not listed in the manifest")
    for file_name, expected in sorted(manifest.files.items()):
        path = folder / file_name
        if file_name not in present:
            raise ModelRefused(f"{folder.name}/{file_name} is missing")
        if sha256_of(path) != expected:
            raise ModelRefused(f"{folder.name}/{file_name} does not match its SHA-256 "
                               "in the manifest (changed or damaged): not loaded")
    return manifest


def model_folder(models_dir: Path, name: str) -> Path:
    """The folder of the model `name` (a plain name: it cannot leave `models_dir`)."""
    if not name or "/" in name or "\\" in name or name in {".", ".."}:
        raise ModelRefused(f"{name!r} is not a model name")
    return models_dir / name


def load_verified(models_dir: Path, name: str) -> ModelManifest:
    """The model `name`'s manifest, its files checked (`ModelRefused` otherwise)."""
    folder = model_folder(models_dir, name)
    if not folder.is_dir():
        raise ModelRefused(f"no model {name!r} in the models folder")
    return verify_folder(folder)


def scan(models_dir: Path, *, check_files: bool) -> list[ModelFolder]:
    """Every model folder, by name; with `check_files`, each one's files hashed."""
    if not models_dir.is_dir():
        return []
    found: list[ModelFolder] = []
    for folder in sorted(p for p in models_dir.iterdir() if p.is_dir()):
        if folder.name.startswith("."):
            continue  # a copy in progress (`add_model`)
        try:
            manifest = verify_folder(folder) if check_files else read_manifest(folder)
            found.append(ModelFolder(folder=folder, manifest=manifest, problem=None))
        except ModelRefused as exc:
            try:
                manifest = read_manifest(folder)
            except ModelRefused:
                manifest = None
            found.append(ModelFolder(folder=folder, manifest=manifest, problem=str(exc)))
    return found


def manifest_of(source: Path, *, name: str, kind: str,
                languages: tuple[str, ...]) -> ModelManifest:
    """A manifest written from the files' own hashes (the operator confirms them)."""
    files = {file_name: sha256_of(source / file_name)
             for file_name in sorted(_present_files(source))}
    if not files:
        raise ModelRefused(f"{source.name} holds no files")
    return ModelManifest.from_json({"name": name, "kind": kind, "languages": list(languages),
                               "files": files}, folder=source.name)


def add_model(models_dir: Path, source: Path, manifest: ModelManifest) -> Path:
    """Copy `source` into `models_dir/<name>` with its manifest, then verify the copy
    (a file changed while copying refuses it). The copy is made beside the target and
    renamed into place, so a half-copied model is never seen by `scan`."""
    target = model_folder(models_dir, manifest.name)
    if target.exists():
        raise ModelRefused(f"a model named {manifest.name!r} is already there")
    models_dir.mkdir(parents=True, exist_ok=True)
    temp = models_dir / f".{manifest.name}.{os.getpid()}.part"
    shutil.rmtree(temp, ignore_errors=True)
    try:
        for file_name in manifest.files:
            (temp / file_name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / file_name, temp / file_name)
        (temp / MANIFEST).write_bytes(manifest.to_json())
        os.replace(temp, target)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    try:
        verify_folder(target)
    except ModelRefused:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return target
