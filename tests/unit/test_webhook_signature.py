"""The delivery signature: a known vector, the receiver's check, and the Python
example of docs/api.md, which is run here as written."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from transcriber.domain.webhooks import sign, verify_signature

SECRET = "whsec_known_vector_secret"
T = 1767225600  # 2026-01-01T00:00:00Z
BODY = b'{"id":"01jd0000000000000000000000","event":"record.done"}'
# `printf '%s' "1767225600.$BODY" | openssl dgst -sha256 -hmac "$SECRET"`
OPENSSL_HEX = "1cc78c05420f92a025750ba4b7cedea30ff32d7f598b1260ae1695b0129ec540"
API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_signature_matches_a_vector_computed_apart() -> None:
    by_hand = hmac.new(SECRET.encode(), b"1767225600." + BODY, hashlib.sha256).hexdigest()
    assert by_hand == OPENSSL_HEX
    assert sign(SECRET, T, BODY) == f"t={T}, v1={OPENSSL_HEX}"


@pytest.mark.parametrize(("secret", "header", "body", "now", "ok"), [
    (SECRET, f"t={T}, v1={OPENSSL_HEX}", BODY, T, True),
    (SECRET, f"t={T},v1={OPENSSL_HEX}", BODY, T + 300, True),  # no space; at the tolerance
    (SECRET, f"t={T}, v1={OPENSSL_HEX}", BODY, T + 301, False),  # too old: a replay
    (SECRET, f"t={T}, v1={OPENSSL_HEX}", BODY, T - 301, False),
    (SECRET, f"t={T}, v1={OPENSSL_HEX}", BODY + b" ", T, False),  # the body was changed
    ("whsec_another_secret_here", f"t={T}, v1={OPENSSL_HEX}", BODY, T, False),
    (SECRET, f"t={T + 1}, v1={OPENSSL_HEX}", BODY, T, False),  # the time was changed
    (SECRET, f"v1={OPENSSL_HEX}", BODY, T, False),
    (SECRET, f"t=soon, v1={OPENSSL_HEX}", BODY, T, False),
    (SECRET, f"t={T}", BODY, T, False),
    (SECRET, "", BODY, T, False),
])
def test_the_receiver_check(secret: str, header: str, body: bytes, now: int,
                            ok: bool) -> None:
    assert verify_signature(secret, header, body, now=now) is ok


def _doc_example() -> str:
    text = API_DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- signature-check -->\n```python\n(.*?)```", text, re.S)
    assert found is not None, "docs/api.md lost its signature-check example"
    return found.group(1)


def test_the_docs_example_is_the_tested_function_and_works() -> None:
    example = _doc_example()
    assert inspect.getsource(verify_signature) in example
    namespace: dict[str, Any] = {}
    exec(compile(example, str(API_DOC), "exec"), namespace)  # our own doc, run as written
    check = namespace["verify_signature"]
    assert check(SECRET, sign(SECRET, T, BODY), BODY, now=T) is True
    assert check(SECRET, sign(SECRET, T, BODY), BODY + b"x", now=T) is False
    assert check(SECRET, sign(SECRET, T, BODY), BODY, now=T + 3600) is False
