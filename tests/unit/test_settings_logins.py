"""Configured logins follow the web door's rule; the settings of issue 28's small items."""

from __future__ import annotations

import ipaddress

import orjson
import pytest

from transcriber.core.errors import ConfigError
from transcriber.settings import load_settings


@pytest.mark.parametrize("login", ["alice\u00a0", "ali\u200bce", "alice\u3164", "\u2800",
                                   "al ice", ""])
def test_a_look_alike_bot_login_is_refused_without_quoting_it(login: str) -> None:
    allowed = orjson.dumps({"123": login}).decode()
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={"TRANSCRIBER_TELEGRAM_ALLOWED": allowed})
    assert caught.value.key == "telegram.allowed"
    assert "123" in str(caught.value)
    if login:
        assert login not in str(caught.value)


def test_bot_logins_are_nfkc_normalized_as_the_web_stores_them() -> None:
    allowed = orjson.dumps({"123": "\uff41\uff4c\uff49\uff43\uff45", "7": "jose\u0301"})
    s = load_settings(environ={"TRANSCRIBER_TELEGRAM_ALLOWED": allowed.decode()})
    assert dict(s.telegram.allowed) == {"123": "alice", "7": "jos\u00e9"}


@pytest.mark.parametrize("login", ["local\u00a0", " local", "lo\u034fcal"])
def test_a_look_alike_anonymous_user_is_refused(login: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={"TRANSCRIBER_SERVER_ANONYMOUS_USER": login})
    assert caught.value.key == "server.anonymous_user"


def test_metrics_allowed_is_loopback_by_default_and_takes_cidrs() -> None:
    assert load_settings(environ={}).server.metrics_allowed == (
        ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
    s = load_settings(environ={"TRANSCRIBER_SERVER_METRICS_ALLOWED": "10.1.0.0/16, ::1"})
    assert s.server.metrics_allowed == (ipaddress.ip_network("10.1.0.0/16"),
                                        ipaddress.ip_network("::1/128"))
    with pytest.raises(ConfigError, match=r"server\.metrics_allowed"):
        load_settings(environ={"TRANSCRIBER_SERVER_METRICS_ALLOWED": "everyone"})


def test_revisions_max_keeps_at_least_one() -> None:
    assert load_settings(environ={}).storage.revisions_max == 50
    with pytest.raises(ConfigError, match=r"storage\.revisions_max"):
        load_settings(environ={"TRANSCRIBER_STORAGE_REVISIONS_MAX": "0"})
