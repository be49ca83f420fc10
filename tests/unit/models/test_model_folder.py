"""The models folder: a manifest's every file checked before a model loads, a tampered,
missing or unlisted file refused by name, and `add_model`'s copy verified."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from transcriber.providers.model_folder import (
    GIGAAM_ONNX,
    WHISPER_CT2,
    ModelRefused,
    add_model,
    load_verified,
    manifest_of,
    scan,
    verify_folder,
)


def _model(root: Path, name: str = "tiny", kind: str = WHISPER_CT2) -> Path:
    folder = root / name
    (folder / "sub").mkdir(parents=True)
    (folder / "model.bin").write_bytes(b"weights" * 100)
    (folder / "sub" / "vocabulary.txt").write_text("a\nb\n", encoding="utf-8")
    manifest = manifest_of(folder, name=name, kind=kind, languages=("ru",))
    (folder / "manifest.json").write_bytes(manifest.to_json())
    return folder


def test_a_matching_folder_is_verified(tmp_path: Path) -> None:
    folder = _model(tmp_path)
    manifest = verify_folder(folder)
    assert manifest.files["model.bin"] == hashlib.sha256(b"weights" * 100).hexdigest()
    assert set(manifest.files) == {"model.bin", "sub/vocabulary.txt"}
    assert load_verified(tmp_path, "tiny") == manifest


def test_a_changed_file_is_refused_by_name(tmp_path: Path) -> None:
    folder = _model(tmp_path)
    (folder / "model.bin").write_bytes(b"weights" * 99 + b"tampered")
    with pytest.raises(ModelRefused, match=r"tiny/model.bin does not match its SHA-256"):
        verify_folder(folder)


def test_a_missing_or_unlisted_file_is_refused(tmp_path: Path) -> None:
    folder = _model(tmp_path)
    (folder / "extra.onnx").write_bytes(b"x")
    with pytest.raises(ModelRefused, match=r"tiny/extra.onnx is not listed"):
        verify_folder(folder)
    (folder / "extra.onnx").unlink()
    (folder / "sub" / "vocabulary.txt").unlink()
    with pytest.raises(ModelRefused, match=r"tiny/sub/vocabulary.txt is missing"):
        verify_folder(folder)


@pytest.mark.parametrize(("change", "problem"), [
    ({"kind": "pytorch"}, "`kind` must be one of"),
    ({"languages": "ru"}, "`languages` must be a list"),
    ({"files": {"../outside.bin": "0" * 64}}, "leaves the folder"),
    ({"files": {"/etc/passwd": "0" * 64}}, "leaves the folder"),
    ({"files": {"model.bin": "ABC"}}, "needs a lowercase SHA-256"),
    ({"name": "other"}, "folder must carry the model's name"),
])
def test_a_bad_manifest_is_refused(tmp_path: Path, change: dict[str, object],
                                   problem: str) -> None:
    folder = _model(tmp_path)
    data = orjson.loads((folder / "manifest.json").read_bytes())
    (folder / "manifest.json").write_bytes(orjson.dumps({**data, **change}))
    with pytest.raises(ModelRefused, match=problem):
        verify_folder(folder)


def test_no_manifest_and_bad_names_are_refused(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    with pytest.raises(ModelRefused, match=r"has no manifest\.json"):
        load_verified(tmp_path, "bare")
    with pytest.raises(ModelRefused, match=r"'\.\.' is not a model name"):
        load_verified(tmp_path, "..")
    with pytest.raises(ModelRefused, match="no model 'absent'"):
        load_verified(tmp_path, "absent")


def test_scan_lists_each_model_and_why_one_is_refused(tmp_path: Path) -> None:
    _model(tmp_path, "good")
    bad = _model(tmp_path, "bad", kind=GIGAAM_ONNX)
    (bad / "model.bin").write_bytes(b"changed")
    quick = {m.name: m for m in scan(tmp_path, check_files=False)}
    assert quick["bad"].verified  # the shape only: not hashed
    assert quick["good"].verified
    checked = {m.name: m for m in scan(tmp_path, check_files=True)}
    assert checked["good"].verified
    assert not checked["bad"].verified
    assert checked["bad"].manifest is not None
    assert checked["bad"].manifest.kind == GIGAAM_ONNX
    assert "bad/model.bin does not match" in (checked["bad"].problem or "")


def test_add_model_copies_the_files_and_writes_a_manifest(tmp_path: Path) -> None:
    source = _model(tmp_path / "fetched", "gigaam")
    (source / "manifest.json").unlink()
    manifest = manifest_of(source, name="gigaam-v3", kind=GIGAAM_ONNX, languages=("ru",))
    target = add_model(tmp_path / "models", source, manifest)
    assert target == tmp_path / "models" / "gigaam-v3"
    assert verify_folder(target) == manifest
    assert not list((tmp_path / "models").glob(".*"))  # nothing half-copied left
    with pytest.raises(ModelRefused, match="already there"):
        add_model(tmp_path / "models", source, manifest)
