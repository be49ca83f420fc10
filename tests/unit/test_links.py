"""Links for people outside, the pure part: the secret, its hash, the expiry, the
request body, the per-link rate limit and the page's HTML."""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import UTC, datetime, timedelta

import pytest

from transcriber.domain import links
from transcriber.settings import LinkSettings
from transcriber.testing.clock import FakeClock
from transcriber.web.errors import ApiError
from transcriber.web.link_page import (
    CSP,
    MESSAGES,
    NOTICES,
    STYLE,
    PageLine,
    PageView,
    render_notice,
    render_page,
)
from transcriber.web.links import parse_link_request
from transcriber.web.public_links import link_limiter

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_secret_carries_192_random_bits_and_is_stored_as_its_sha256() -> None:
    made = [links.new_link() for _ in range(200)]
    assert len({m.secret for m in made}) == 200
    for m in made:
        assert links.well_formed(m.secret)
        assert len(base64.urlsafe_b64decode(m.secret)) * 8 == 192 >= 128
        assert m.hash == hashlib.sha256(m.secret.encode()).hexdigest()
        assert m.secret not in m.hash
        assert m.path == "/s/" + m.secret
        assert links.matches(m.hash, m.secret)
        assert not links.matches(m.hash, m.secret[:-1] + ("A" if m.secret[-1] != "A" else "B"))


@pytest.mark.parametrize("secret", ["", "A" * 31, "A" * 33, "A" * 31 + "=", "A" * 31 + "/",
                                    "é" * 32, "A" * 31 + "\x00", " " + "A" * 31, "A" * 4096])
def test_only_the_shape_this_service_makes_is_well_formed(secret: str) -> None:
    assert not links.well_formed(secret)


def test_expiry_is_days_from_now_and_stops_at_that_second() -> None:
    expires = links.expires_at(NOW, 7)
    assert expires == "2026-01-08T00:00:00Z"
    assert links.open_now(expires, NOW + timedelta(days=7, seconds=-1))
    assert not links.open_now(expires, NOW + timedelta(days=7))
    assert not links.open_now(expires, NOW + timedelta(days=30))
    with pytest.raises(ValueError, match="at least one day"):
        links.expires_at(NOW, 0)


def test_the_request_defaults_to_seven_days_without_audio_and_refuses_the_rest() -> None:
    assert parse_link_request({}, max_days=90) == parse_link_request(
        {"expires_in_days": 7, "audio": False}, max_days=90)
    assert parse_link_request({"audio": True, "expires_in_days": 90}, max_days=90).audio
    # A setting below the default: the default is the setting.
    assert parse_link_request({}, max_days=3).expires_in_days == 3
    bodies: tuple[object, ...] = (
        {"expires_in_days": 91}, {"expires_in_days": 0}, {"expires_in_days": 1.5},
        {"expires_in_days": None}, {"expires_in_days": False}, {"audio": 1}, {"audio": None},
        {"secret": "x"}, [], "7")
    for body in bodies:
        with pytest.raises(ApiError) as refused:
            parse_link_request(body, max_days=90)
        assert refused.value.status == 400


def test_each_link_has_its_own_budget_refilled_over_a_minute() -> None:
    clock = FakeClock()
    limiter = link_limiter(LinkSettings(requests_per_minute=6), clock, table_max=100)
    assert all(limiter.hit("link-a").allowed for _ in range(6))
    refused = limiter.hit("link-a")
    assert not refused.allowed
    assert refused.retry_after_seconds == 10
    assert limiter.hit("link-b").allowed  # another link is not charged
    clock.advance(10)
    assert limiter.hit("link-a").allowed
    assert not limiter.hit("link-a").allowed


def test_the_page_escapes_everything_and_names_only_its_own_paths() -> None:
    view = PageView(title='<script>alert(1)</script>', base="/s/" + "A" * 32, audio=True,
                    lines=[PageLine(voice='"Anna"', time="0:01", text="<img src=x onerror=1>"),
                           PageLine(voice=None, time="1:05", text="plain & simple")])
    html = render_page(view, "en")
    assert "<script>" not in html
    assert "<img" not in html
    assert "&lt;script&gt;" in html
    assert "&amp; simple" in html
    assert "&quot;Anna&quot;" in html
    addresses = set(re.findall(r'(?:href|src)="([^"]*)"', html))
    assert addresses == {f"{view.base}/audio", f"{view.base}/transcript?format=txt",
                         f"{view.base}/transcript?format=srt"}
    assert '<meta name="robots" content="noindex' in html
    assert f"<style>{STYLE}</style>" in html
    expected = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    assert f"'sha256-{expected}'" in CSP
    assert "default-src 'none'" in CSP


def test_the_page_without_a_transcript_or_audio() -> None:
    view = PageView(title="", base="/s/" + "A" * 32, audio=False, lines=None, spoken="de")
    html = render_page(view, "ru")
    assert "<audio" not in html
    assert "format=txt" not in html
    assert MESSAGES["ru"]["not_ready"] in html
    assert MESSAGES["ru"]["untitled"] in html
    assert 'lang="ru"' in html
    assert 'lang="de"' not in html  # no transcript: no spoken language to mark


def test_both_languages_have_the_same_words_and_the_notices_read_them() -> None:
    assert MESSAGES["en"].keys() == MESSAGES["ru"].keys()
    for language in ("en", "ru"):
        for kind in NOTICES:
            assert MESSAGES[language][kind] in render_notice(language, kind)
    assert render_notice("de", "not_found") == render_notice("en", "not_found")
