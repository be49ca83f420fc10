"""The transcript as documents people open (`domain/documents.py`): Markdown and DOCX.

The DOCX is read back with python-docx (a test dependency, an independent reader of
WordprocessingML), never with the code that wrote it."""

from __future__ import annotations

import io
import zipfile

import docx
from docx.text.paragraph import Paragraph

from transcriber.domain.documents import clock, md_escape, render_bytes, to_docx, to_markdown
from transcriber.domain.transcripts import Utterance

TALK = (
    Utterance(start_ms=0, end_ms=1830, channel=0, speaker="S1", text="Здравствуйте, коллеги."),
    Utterance(start_ms=61_500, end_ms=64_000, channel=0, speaker="S2",
              text="*Not* bold, [a](link) # no heading\n\nsecond line"),
    Utterance(start_ms=64_000, end_ms=64_500, channel=0, speaker="S2", text="   "),
    Utterance(start_ms=3_725_000, end_ms=3_726_000, channel=0, speaker="S1",
              text="<w:t>&amp; \x01done"),
)
NAMES = {"S1": "Анна"}


def _paragraphs(data: bytes) -> list[Paragraph]:
    return list(docx.Document(io.BytesIO(data)).paragraphs)


def test_clock_is_minutes_and_seconds_then_hours() -> None:
    assert [clock(0), clock(61_999), clock(3_725_000), clock(-5)] == [
        "0:00", "1:01", "1:02:05", "0:00"]


def test_markdown_heads_with_title_and_facts_then_one_paragraph_per_utterance() -> None:
    text = to_markdown(TALK, NAMES, title="Планёрка", date="2026-12-07T10:00:00Z",
                       duration_ms=3_726_000)
    blocks = text.rstrip("\n").split("\n\n")
    assert blocks == [
        "# Планёрка",
        r"2026\-12\-07 · 1:02:06 · Анна, S2",
        r"**Анна** \[0:00\] Здравствуйте, коллеги\.",
        r"**S2** \[1:01\] \*Not\* bold, \[a\]\(link\) \# no heading second line",
        r"**Анна** \[1:02:05\] \<w:t\>\&amp; " + "\x01" + r"done",
    ]


def test_markdown_escapes_every_markup_character() -> None:
    assert md_escape(r"a*b_c`d[e]f#g<h>i\j|k!l") == r"a\*b\_c\`d\[e\]f\#g\<h\>i\\j\|k\!l"
    # A name cannot close the bold around it.
    text = to_markdown(TALK[:2], {"S1": "**Boss**"})
    assert r"**\*\*Boss\*\*** \[0:00\]" in text


def test_markdown_of_one_speaker_names_nobody_and_empty_is_a_heading() -> None:
    one = (Utterance(start_ms=0, end_ms=1000, channel=0, text="Hi."),)
    assert to_markdown(one) == "# Transcript\n\n\\[0:00\\] Hi\\.\n"
    assert to_markdown((), title="") == "# Transcript\n"


def test_docx_opens_with_title_facts_speakers_bold_and_times() -> None:
    data = to_docx(TALK, NAMES, title="Планёрка", date="2026-12-07T10:00:00Z",
                   duration_ms=3_726_000)
    paragraphs = _paragraphs(data)
    assert [p.text for p in paragraphs] == [
        "Планёрка",
        "2026-12-07 · 1:02:06 · Анна, S2",
        "Анна [0:00] Здравствуйте, коллеги.",
        "S2 [1:01] *Not* bold, [a](link) # no heading second line",
        # XML's forbidden control character is dropped; markup stays text.
        "Анна [1:02:05] <w:t>&amp; done",
    ]
    assert paragraphs[0].style is not None
    assert paragraphs[0].style.name == "Title"
    speaker = paragraphs[2].runs[0]
    assert (speaker.text, speaker.bold) == ("Анна ", True)
    assert not paragraphs[2].runs[-1].bold


def test_docx_of_an_empty_transcript_is_a_document_with_its_title() -> None:
    assert [p.text for p in _paragraphs(to_docx(()))] == ["Transcript"]


def test_docx_is_the_same_bytes_each_time() -> None:
    first, second = to_docx(TALK, NAMES), to_docx(TALK, NAMES)
    assert first == second
    assert zipfile.ZipFile(io.BytesIO(first)).testzip() is None


def test_render_bytes_gives_every_format() -> None:
    assert render_bytes(TALK, "txt", NAMES).decode().startswith("Анна: Здравствуйте")
    assert render_bytes(TALK, "md", NAMES, title="T").startswith(b"# T\n")
    assert render_bytes(TALK, "docx", NAMES)[:2] == b"PK"
