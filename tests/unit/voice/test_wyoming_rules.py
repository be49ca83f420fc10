"""The Wyoming door's pure rules: the language a `transcribe` names, which peers are
served, an archived command's WAV, and the settings a start refuses."""

from __future__ import annotations

import io
import ipaddress
import wave

import pytest

from transcriber.core.errors import ConfigError
from transcriber.settings import load_settings
from transcriber.voice.server import allowed
from transcriber.voice.session import Refused, spoken_language, wav_bytes

LANGUAGES = ("en", "ru", "de")
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


@pytest.mark.parametrize(("asked", "code"), [
    (None, None), ("", None), ("auto", None), ("en", "en"), ("en_US", "en"),
    ("en-US", "en"), ("RU", "ru"), (" de-DE ", "de"),
])
def test_the_language_is_the_recognizers_code(asked: str | None, code: str | None) -> None:
    assert spoken_language(asked, LANGUAGES) == code


def test_a_language_the_recognizer_does_not_take_is_refused() -> None:
    with pytest.raises(Refused) as refused:
        spoken_language("xx_XX", LANGUAGES)
    assert refused.value.code == "unsupported-language"


@pytest.mark.parametrize(("peer", "served"), [
    (("127.0.0.1", 5000), True), (("::1", 5000, 0, 0), True),
    (("::ffff:127.0.0.1", 5000, 0, 0), True), (("192.168.1.20", 5000), False),
    (("fe80::1%eth0", 5000, 0, 2), False), (None, False), ("garbage", False),
])
def test_only_peers_in_the_allow_list_are_served(peer: object, served: bool) -> None:
    assert allowed(peer, LOOPBACK) is served


def test_an_archived_command_is_a_16_khz_mono_wav() -> None:
    pcm = bytes(range(256)) * 125  # 32 000 bytes: one second
    with wave.open(io.BytesIO(wav_bytes(pcm))) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16_000, 1, 2)
        assert wav.readframes(wav.getnframes()) == pcm


@pytest.mark.parametrize(("env", "key"), [
    ({"TRANSCRIBER_WYOMING_ARCHIVE": "true"}, "wyoming.archive_login"),
    ({"TRANSCRIBER_WYOMING_ARCHIVE": "true", "TRANSCRIBER_WYOMING_ARCHIVE_LOGIN": "a b"},
     "wyoming.archive_login"),
    ({"TRANSCRIBER_WYOMING_PORT": "70000"}, "wyoming.port"),
    ({"TRANSCRIBER_WYOMING_MAX_AUDIO_SECONDS": "0"}, "wyoming.max_audio_seconds"),
    ({"TRANSCRIBER_WYOMING_ALLOWED": "not-an-address"}, "wyoming.allowed"),
    # The address announced must be one: a host name is not announced.
    ({"TRANSCRIBER_WYOMING_ZEROCONF": "true", "TRANSCRIBER_WYOMING_HOST": "localhost"},
     "wyoming.host"),
    ({"TRANSCRIBER_WYOMING_ZEROCONF_NAME": "kitchen.stt"}, "wyoming.zeroconf_name"),
])
def test_bad_wyoming_settings_name_the_key(env: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(environ=env)
    assert key in str(refused.value)


def test_the_defaults_listen_on_loopback_for_loopback_and_keep_nothing() -> None:
    wyoming = load_settings(environ={}).wyoming
    assert (wyoming.enabled, wyoming.host, wyoming.port, wyoming.archive) == (
        False, "127.0.0.1", 10300, False)
    assert wyoming.zeroconf is False  # nothing announced unless asked
    assert wyoming.allowed == LOOPBACK
