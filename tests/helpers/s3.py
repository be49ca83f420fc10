"""A real S3 for the tests: moto in server mode on loopback, a fresh bucket per test.

`start_moto()` (the session fixture `s3_endpoint`) runs the server; `Bucket`
makes a bucket on it and reads it back with boto3 (what is in it, what a
test plants or removes behind the service's back). `files_sections` gives
the settings sections of `storage.files = s3` on that bucket.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3  # type: ignore[import-untyped]
from moto.server import ThreadedMotoServer

from transcriber.settings import Secret

REGION = "us-east-1"
PREFIX = "transcriber/"


def start_moto() -> Iterator[str]:
    """The endpoint of a moto server on a free loopback port, stopped afterwards."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def s3_client(endpoint: str) -> Any:
    return boto3.client("s3", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id="test", aws_secret_access_key="test")


@dataclass
class Bucket:
    endpoint: str
    name: str = field(default_factory=lambda: f"transcriber-{uuid.uuid4().hex[:12]}")
    prefix: str = PREFIX

    def __post_init__(self) -> None:
        self.client = s3_client(self.endpoint)
        self.client.create_bucket(Bucket=self.name)

    def settings(self) -> dict[str, Any]:
        """The `s3` section of settings on this bucket."""
        return {"endpoint_url": self.endpoint, "bucket": self.name, "region": REGION,
                "prefix": self.prefix, "access_key_id": Secret("test"),
                "secret_access_key": Secret("test")}

    def files_sections(self) -> dict[str, dict[str, Any]]:
        """`storage.files = s3` on this bucket, as `make_settings` keyword arguments."""
        return {"storage": {"files": "s3"}, "s3": self.settings()}

    def keys(self, under: str = "") -> list[str]:
        """Every key under `prefix + under`, sorted."""
        found: list[str] = []
        for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.name, Prefix=self.prefix + under):
            found += [item["Key"] for item in page.get("Contents", ())]
        return sorted(found)

    def record_keys(self, record_id: str | None = None) -> list[str]:
        return self.keys(f"records/{record_id}/" if record_id else "records/")

    def get(self, key: str) -> bytes:
        body: bytes = self.client.get_object(Bucket=self.name, Key=key)["Body"].read()
        return body

    def put(self, key: str, body: bytes) -> None:
        self.client.put_object(Bucket=self.name, Key=key, Body=body)

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.name, Key=key)

    def uploads_in_progress(self) -> list[str]:
        answer = self.client.list_multipart_uploads(Bucket=self.name)
        return [item["Key"] for item in answer.get("Uploads", ())]
