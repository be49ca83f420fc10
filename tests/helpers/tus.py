"""Resumable uploads' tests: tus requests against the test app, and what they leave."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.helpers.web import Client, stored_files

TUS = {"Tus-Resumable": "1.0.0"}
OCTETS = {**TUS, "Content-Type": "application/offset+octet-stream"}


def metadata(**pairs: str) -> str:
    """`Upload-Metadata` of these pairs."""
    return ",".join(f"{key} {base64.b64encode(value.encode()).decode()}"
                    for key, value in pairs.items())


async def create(client: Client, length: int, **headers: str) -> str:
    """A new upload of `length` bytes; its location (a path)."""
    response = await client.post("/app/uploads/", headers={
        **TUS, "Upload-Length": str(length),
        "Upload-Metadata": metadata(filename="meeting.ogg"), **headers})
    assert response.status == 201, await response.text()
    location = response.headers["Location"]
    assert location.startswith("/app/uploads/")
    return location


async def offset_of(client: Client, location: str, **headers: str) -> int:
    """The stored offset (`HEAD`)."""
    response = await client.head(location, headers={**TUS, **headers})
    assert response.status == 200
    return int(response.headers["Upload-Offset"])


def stored(data_dir: Path) -> bytes:
    """The one record file's bytes."""
    (original,) = stored_files(data_dir)
    return original.read_bytes()


def no_partials(data_dir: Path) -> None:
    folder = data_dir / "uploads"
    assert not folder.exists() or list(folder.iterdir()) == []
