"""The transcript as documents people open: Markdown (`md`) and Word (`docx`).

A title heading, the record's facts line (date, duration, speakers), then one
paragraph per spoken utterance: the speaker in bold (where the record names one,
as the TXT export names it) and the utterance's start time, then its words.

DOCX is written with `zipfile` and a handful of fixed WordprocessingML parts
rather than python-docx: the document is five small XML files, and python-docx
would bring lxml (13 MB installed, python-docx 2.9 MB more) into the service
and the CLI for them. The tests open what is made here with python-docx, an
independent reader.

Pure: no I/O, no clock (the DOCX's zip entries carry a fixed date, so the same
transcript always gives the same bytes).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape

from transcriber.domain.transcript_formats import TranscriptFormat
from transcriber.domain.transcripts import (
    Utterance,
    has_several,
    one_line,
    render,
    speakers_of,
    voice_of,
)

# Every character Markdown may read as markup at some place in a line; escaping
# them all is always right (CommonMark: any ASCII punctuation may be escaped).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")
# XML 1.0 forbids these control characters even as references: Word refuses the file.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_ZIP_DATE = (2000, 1, 1, 0, 0, 0)


def clock(ms: int) -> str:
    """`m:ss` (or `h:mm:ss` past the hour): the time a paragraph starts at."""
    seconds = max(ms, 0) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def facts_line(utterances: Sequence[Utterance], names: Mapping[str, str], *,
               date: str = "", duration_ms: int | None = None) -> str:
    """`2026-12-07 · 12:04 · Anna, S2`: what is known of the record, left out where
    unknown (the speakers only when the record has several)."""
    parts = [date[:10]] if date else []
    if duration_ms is not None:
        parts.append(clock(duration_ms))
    if len(speakers_of(utterances)) > 1:
        parts.append(", ".join(one_line(names.get(s, "").strip() or s)
                               for s in speakers_of(utterances)))
    return " · ".join(parts)


def _paragraphs(utterances: Sequence[Utterance],
                names: Mapping[str, str]) -> list[tuple[str | None, str, str]]:
    """(voice, time, text) of each utterance with words, in order."""
    several = has_several(utterances)
    return [(voice_of(u, names, several), clock(u.start_ms), one_line(u.text))
            for u in utterances if u.text.strip()]


def md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def to_markdown(utterances: Sequence[Utterance], names: Mapping[str, str] | None = None, *,
                title: str = "", date: str = "", duration_ms: int | None = None) -> str:
    given = names or {}
    blocks = [f"# {md_escape(one_line(title)) or 'Transcript'}"]
    facts = facts_line(utterances, given, date=date, duration_ms=duration_ms)
    if facts:
        blocks.append(md_escape(facts))
    for voice, time, text in _paragraphs(utterances, given):
        lead = f"**{md_escape(one_line(voice))}** " if voice else ""
        blocks.append(f"{lead}\\[{time}\\] {md_escape(text)}")
    return "\n\n".join(blocks) + "\n"


def _xml(text: str) -> str:
    return escape(_XML_FORBIDDEN.sub("", text))


def _run(text: str, *, bold: bool = False, grey: bool = False) -> str:
    props = ("<w:b/>" if bold else "") + ('<w:color w:val="666666"/>' if grey else "")
    rpr = f"<w:rPr>{props}</w:rPr>" if props else ""
    return f'<w:r>{rpr}<w:t xml:space="preserve">{_xml(text)}</w:t></w:r>'


def _paragraph(runs: str, style: str = "") -> str:
    ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{ppr}{runs}</w:p>"


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.wordprocessingml.document.main+xml"/>'
    '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.wordprocessingml.styles+xml"/></Types>')
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/></Relationships>')
_DOC_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/styles" Target="styles.xml"/></Relationships>')
_STYLES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    f'<w:styles xmlns:w="{_W}">'
    '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/>'
    '<w:pPr><w:spacing w:after="160"/></w:pPr></w:style>'
    '<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/>'
    '<w:basedOn w:val="Normal"/><w:rPr><w:b/><w:sz w:val="40"/></w:rPr></w:style>'
    '</w:styles>')


def to_docx(utterances: Sequence[Utterance], names: Mapping[str, str] | None = None, *,
            title: str = "", date: str = "", duration_ms: int | None = None) -> bytes:
    given = names or {}
    body = [_paragraph(_run(one_line(title) or "Transcript"), "Title")]
    facts = facts_line(utterances, given, date=date, duration_ms=duration_ms)
    if facts:
        body.append(_paragraph(_run(facts, grey=True)))
    for voice, time, text in _paragraphs(utterances, given):
        lead = _run(f"{one_line(voice)} ", bold=True) if voice else ""
        body.append(_paragraph(lead + _run(f"[{time}] ", grey=True) + _run(text)))
    document = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
                f'<w:document xmlns:w="{_W}"><w:body>{"".join(body)}'
                "<w:sectPr/></w:body></w:document>")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, part in (("[Content_Types].xml", _CONTENT_TYPES), ("_rels/.rels", _RELS),
                           ("word/_rels/document.xml.rels", _DOC_RELS),
                           ("word/styles.xml", _STYLES), ("word/document.xml", document)):
            archive.writestr(zipfile.ZipInfo(name, _ZIP_DATE), part.encode(),
                             compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def render_bytes(utterances: Sequence[Utterance], fmt: TranscriptFormat,
                 names: Mapping[str, str] | None = None, *, title: str = "",
                 quality: Mapping[str, Any] | None = None, date: str = "",
                 duration_ms: int | None = None) -> bytes:
    """The transcript in any of `FORMATS` as the bytes a download or file holds:
    the documents here, the text formats (`transcripts.render`) in UTF-8."""
    if fmt == "md":
        return to_markdown(utterances, names, title=title, date=date,
                           duration_ms=duration_ms).encode()
    if fmt == "docx":
        return to_docx(utterances, names, title=title, date=date, duration_ms=duration_ms)
    return render(utterances, fmt, names, title=title, quality=quality).encode()
