"""What a 512 MiB answer of a language model costs the describer: its peak memory.

The fake chat-completions endpoint (transcriber/testing/fake_openai.py) streams a
generated 512 MiB answer without a `Content-Length`; the describer reads it up to its
cap (1 MiB) and hangs up. It prints the peak RSS of this process (the fake runs in it
too) before and after, and how much the server got to send. The numbers are in
docs/hostile-input.md, "Outside servers and what stays behind".

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s -p no:cacheprovider
tests/bench/test_describer_memory.py`.
"""

from __future__ import annotations

import resource

import pytest

from tests.helpers.meetings import MEETING_EN, utterances
from transcriber.core.errors import PermanentFailure
from transcriber.ports import Material
from transcriber.providers.describe.openai import OpenAIDescriber
from transcriber.settings import DescriberSettings
from transcriber.testing.fake_openai import FakeChatCompletions, Huge

pytestmark = pytest.mark.bench

MIB = 1 << 20


async def _describe(fake: FakeChatCompletions) -> object:
    said = utterances(MEETING_EN)
    describer = OpenAIDescriber(DescriberSettings(provider="openai", base_url=fake.base_url,
                                                  model="m", timeout_seconds=30.0))
    try:
        return await describer.describe(Material(
            record_id="r1", language="en", duration_ms=said[-1].end_ms,
            utterances=tuple(said), owner_topics=()))
    finally:
        await describer.close()


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def test_peak_memory_of_a_512_mib_answer() -> None:
    fake = FakeChatCompletions()
    await fake.start()
    try:
        before = _peak_mib()
        fake.script(Huge(512 * MIB))
        with pytest.raises(PermanentFailure):
            await _describe(fake)
        after = _peak_mib()
    finally:
        await fake.stop()
    print(f"\npeak RSS before {before:.0f} MiB, after a 512 MiB answer {after:.0f} MiB; "
          f"the server sent {fake.sent / MIB:.1f} MiB")
    assert after - before < 128
