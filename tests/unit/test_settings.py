from __future__ import annotations

import dataclasses
import ipaddress
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transcriber.core.errors import ConfigError
from transcriber.settings import Secret, Settings, load_settings


def test_embedded_defaults_match_the_design() -> None:
    s = load_settings(environ={})
    assert (s.server.host, s.server.port) == ("127.0.0.1", 8080)
    assert s.server.trusted_proxies == (
        ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
    assert s.server.anonymous_user == "local"
    assert s.storage.data_dir == Path("data")
    assert s.storage.read_connections == 4
    assert s.storage.busy_timeout_ms == 5000
    p = s.pipeline
    assert (p.workers, p.lease_seconds, p.attempts_limit) == (3, 60, 8)
    assert (p.backoff_base_seconds, p.backoff_cap_seconds) == (5, 300)
    assert (p.poll_first_delay_seconds, p.poll_delay_seconds, p.idle_sleep_seconds) == (10, 5, 1)
    assert (p.own_work_limit_minutes, p.foreign_work_limit_minutes) == (60, 1440)
    assert s.recognizer.provider == "local"
    assert s.telegram.token is None
    assert dict(s.telegram.allowed) == {}
    assert s.speechkit.stt_url == "https://stt.api.cloud.yandex.net"
    assert s.speechkit.max_part_seconds == 14400
    assert (s.s3.endpoint_url, s.s3.region, s.s3.prefix) == (
        "https://storage.yandexcloud.net", "ru-central1", "transcriber/")
    assert s.server.upload_max_bytes == 8 * 1024**3
    assert (s.server.page_default, s.server.page_max) == (30, 100)
    assert (s.server.json_max_bytes, s.server.json_bodies_max) == (65536, 32)
    assert (s.describer.provider, s.describer.base_url, s.describer.api_key) == (
        "extractive", "", None)


def test_file_then_environment_override(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[pipeline]\nworkers = 5\nlease_seconds = 30\n[server]\nport = 9000\n')
    s = load_settings(config, environ={"TRANSCRIBER_PIPELINE_WORKERS": "0",
                                       "TRANSCRIBER_TELEGRAM_ALLOWED": '{"123": "alice"}',
                                       "TRANSCRIBER_SERVER_TRUSTED_PROXIES": "10.0.0.0/8, ::1"})
    assert s.pipeline.workers == 0
    assert s.pipeline.lease_seconds == 30
    assert s.server.port == 9000
    assert dict(s.telegram.allowed) == {"123": "alice"}
    assert len(s.server.trusted_proxies) == 2


def test_config_file_from_environment(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[storage]\nread_connections = 2\n')
    s = load_settings(environ={"TRANSCRIBER_CONFIG": str(config)})
    assert s.storage.read_connections == 2


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"TRANSCRIBER_PIPELINE_WORKERS": "three"}, "pipeline.workers"),
        ({"TRANSCRIBER_PIPELINE_WORKERS": "-1"}, "pipeline.workers"),
        ({"TRANSCRIBER_SERVER_PORT": "70000"}, "server.port"),
        ({"TRANSCRIBER_SERVER_TRUSTED_PROXIES": "nonsense"}, "server.trusted_proxies"),
        ({"TRANSCRIBER_TELEGRAM_ALLOWED": "[1,2]"}, "telegram.allowed"),
        ({"TRANSCRIBER_TELEGRAM_ALLOWED": '{"bob": "x"}'}, "telegram.allowed"),
        ({"TRANSCRIBER_RECOGNIZER_PROVIDER": "gpt"}, "recognizer.provider"),
        ({"TRANSCRIBER_SERVER_HOST": "0.0.0.0"}, "server.anonymous_user"),
        ({"TRANSCRIBER_PIPELINE_BACKOFF_CAP_SECONDS": "1"}, "pipeline.backoff_cap_seconds"),
        ({"TRANSCRIBER_TELEGRAM_LOCAL_MODE": "true"}, "telegram.local_files_dir"),
        ({"TRANSCRIBER_TELEGRAM_LOCAL_MODE": "true",
          "TRANSCRIBER_TELEGRAM_LOCAL_FILES_DIR": "relative/dir"}, "telegram.local_files_dir"),
        ({"TRANSCRIBER_SERVER_JSON_MAX_BYTES": "100"}, "server.json_max_bytes"),
        ({"TRANSCRIBER_SERVER_JSON_BODIES_MAX": "0"}, "server.json_bodies_max"),
        ({"TRANSCRIBER_DESCRIBER_PROVIDER": "gpt"}, "describer.provider"),
        ({"TRANSCRIBER_DESCRIBER_PROVIDER": "openai"}, "describer.base_url"),
        ({"TRANSCRIBER_DESCRIBER_PROVIDER": "openai",
          "TRANSCRIBER_DESCRIBER_BASE_URL": "http://127.0.0.1:11434/v1"}, "describer.model"),
        ({"TRANSCRIBER_DESCRIBER_BASE_URL": "ftp://x"}, "describer.base_url"),
        ({"TRANSCRIBER_DESCRIBER_MAX_INPUT_CHARS": "100"}, "describer.max_input_chars"),
        ({"TRANSCRIBER_DESCRIBER_TIMEOUT_SECONDS": "0"}, "describer.timeout_seconds"),
        ({"TRANSCRIBER_DESCRIBER_RETRY_CAP_SECONDS": "1"}, "describer.retry_cap_seconds"),
        ({"TRANSCRIBER_ASK_PROVIDER": "magic"}, "ask.provider"),
        ({"TRANSCRIBER_ASK_PROVIDER": "openai", "TRANSCRIBER_ASK_MODEL": "m"}, "ask.base_url"),
        ({"TRANSCRIBER_ASK_PROVIDER": "openai", "TRANSCRIBER_ASK_BASE_URL": "http://x"},
         "ask.model"),
        ({"TRANSCRIBER_ASK_BASE_URL": "ftp://x"}, "ask.base_url"),
        ({"TRANSCRIBER_ASK_MAX_PROMPT_CHARS": "10"}, "ask.max_prompt_chars"),
        ({"TRANSCRIBER_ASK_TIMEOUT_SECONDS": "0"}, "ask.timeout_seconds"),
    ],
)
def test_bad_values_name_the_key(env: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ=env)
    assert caught.value.key == key


def test_public_host_without_anonymous_user_is_allowed() -> None:
    s = load_settings(environ={"TRANSCRIBER_SERVER_HOST": "0.0.0.0",
                               "TRANSCRIBER_SERVER_ANONYMOUS_USER": ""})
    assert s.server.anonymous_user == ""


def test_unknown_keys_in_the_file_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[pipeline]\nworkerz = 5\n')
    with pytest.raises(ConfigError, match=r"pipeline\.workerz"):
        load_settings(config, environ={})


def test_secrets_never_show_in_repr() -> None:
    s = load_settings(environ={"TRANSCRIBER_SPEECHKIT_API_KEY": "AQVN-very-hidden",
                               "TRANSCRIBER_TELEGRAM_TOKEN": "123:ABC-hidden",
                               "TRANSCRIBER_DESCRIBER_API_KEY": "sk-hidden"})
    assert isinstance(s.speechkit.api_key, Secret)
    assert s.speechkit.api_key.value == "AQVN-very-hidden"
    assert "hidden" not in repr(s)
    assert "hidden" not in str(s.telegram.token)
    assert isinstance(s.describer.api_key, Secret)
    assert "hidden" not in str(s.describer.api_key)


def test_cli_reports_a_bad_setting_in_one_line_with_exit_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "transcriber.cli", "status"],
        env={"TRANSCRIBER_PIPELINE_WORKERS": "many", "PATH": "/usr/bin:/bin",
             "TRANSCRIBER_STORAGE_DATA_DIR": str(tmp_path)},
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "pipeline.workers" in lines[0]
    assert "Traceback" not in result.stderr


def test_every_setting_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text()
    defaults = load_settings(environ={})
    for section in dataclasses.fields(Settings):
        for key in dataclasses.fields(getattr(defaults, section.name)):
            assert f"`{section.name}.{key.name}`" in docs, f"{section.name}.{key.name}"


@pytest.mark.parametrize(("environ", "named", "closest"), [
    ({"TRANSCRIBER_PIPELINE_WORKER": "0"}, "TRANSCRIBER_PIPELINE_WORKER",
     "TRANSCRIBER_PIPELINE_WORKERS"),
    ({"TRANSCRIBER_SEVRER_PORT": "1"}, "TRANSCRIBER_SEVRER_PORT", "TRANSCRIBER_SERVER_PORT"),
])
def test_a_misspelt_variable_is_refused_with_the_closest_name(
    environ: dict[str, str], named: str, closest: str,
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(environ=environ)
    assert refused.value.key == named
    assert f"did you mean {closest}?" in str(refused.value)


def test_variables_that_are_not_settings_stay_allowed() -> None:
    load_settings(environ={"TRANSCRIBER_CONFIG": "", "TRANSCRIBER_BENCH_CYCLES": "10",
                           "OTHER_PIPELINE_WORKER": "x"})


def test_a_misspelt_toml_key_is_refused_with_the_closest_one(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text("[pipeline]\nworker = 0\n")
    with pytest.raises(ConfigError, match=r"pipeline\.worker: unknown setting; "
                                          r"did you mean pipeline\.workers\?"):
        load_settings(config, environ={})
    config.write_text("[pipelines]\nworkers = 0\n")
    with pytest.raises(ConfigError, match=r"did you mean pipeline\?"):
        load_settings(config, environ={})


@pytest.mark.parametrize("where", ["before", "after"])
def test_config_is_taken_before_or_after_the_command(tmp_path: Path, where: str) -> None:
    data = tmp_path / "from-config"
    config = tmp_path / "t.toml"
    config.write_text(f'[storage]\ndata_dir = "{data}"\n')
    args = (["--config", str(config), "migrate"] if where == "before"
            else ["migrate", "--config", str(config)])
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSCRIBER_")}
    result = subprocess.run([sys.executable, "-m", "transcriber.cli", *args],
                            env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert (data / "transcriber.sqlite3").exists()


@pytest.mark.parametrize("token", ["garbage", "123456", ":abc", "12 34:abc", "123:a b",
                                   "abc:def"])
def test_a_malformed_bot_token_is_a_bad_setting_that_hides_the_value(token: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(environ={"TRANSCRIBER_TELEGRAM_TOKEN": token})
    assert err.value.key == "telegram.token"
    assert token not in str(err.value)


def test_allowed_hosts_is_a_list_of_names() -> None:
    s = load_settings(environ={"TRANSCRIBER_SERVER_ALLOWED_HOSTS": "a.example, b.example"})
    assert s.server.allowed_hosts == ("a.example", "b.example")
    assert load_settings(environ={}).server.allowed_hosts == ()


def test_per_user_upload_cap_cannot_exceed_the_total() -> None:
    with pytest.raises(ConfigError, match="uploads_per_user_max"):
        load_settings(environ={"TRANSCRIBER_SERVER_UPLOADS_MAX": "2",
                               "TRANSCRIBER_SERVER_UPLOADS_PER_USER_MAX": "3"})
