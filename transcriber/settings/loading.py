"""Building the tree: embedded defaults, then a TOML file, then the environment."""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from transcriber.core.errors import ConfigError
from transcriber.domain.text import LoginRefused, canonical_login
from transcriber.settings.checks import validate
from transcriber.settings.model import (
    CONFIG_ENV,
    ENV_PREFIX,
    NON_SETTING_ENV,
    NON_SETTING_ENV_PREFIXES,
    Settings,
)
from transcriber.settings.values import Network, Secret


def load_settings(
    config_file: Path | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Defaults, then the TOML file (argument or `TRANSCRIBER_CONFIG`), then env."""
    env = os.environ if environ is None else environ
    if config_file is None and env.get(CONFIG_ENV):
        config_file = Path(env[CONFIG_ENV])
    file_values: dict[str, Any] = {}
    if config_file is not None:
        try:
            file_values = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError("config", f"file {config_file} does not exist") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("config", f"not valid TOML: {exc}") from exc
    return _build(file_values, env)


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    """A settings class's field types, resolved once per class: each resolution
    evaluates every annotation's string again (compiling it), and a settings
    object asks for them 16 times, 12-17 ms of every settings built."""
    found = _HINTS.get(cls)
    if found is None:
        found = _HINTS[cls] = typing.get_type_hints(cls)
    return found


def setting_keys() -> dict[str, str]:
    """Every `section.key`, with its environment variable."""
    keys: dict[str, str] = {}
    for section_field in dataclasses.fields(Settings):
        section_cls = _hints(Settings)[section_field.name]
        for key_field in dataclasses.fields(section_cls):
            full = f"{section_field.name}.{key_field.name}"
            keys[full] = f"{ENV_PREFIX}{section_field.name}_{key_field.name}".upper()
    return keys


def _unknown(name: str, known: list[str], what: str) -> ConfigError:
    """A misspelt name must never be silently ignored: say so, with the closest one."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    return ConfigError(name, f"unknown {what}{hint}")


def _check_env_names(env: Mapping[str, str]) -> None:
    known = sorted(setting_keys().values())
    for name in env:
        if (not name.startswith(ENV_PREFIX) or name in NON_SETTING_ENV
                or name.startswith(NON_SETTING_ENV_PREFIXES)):
            continue
        if name not in known:
            raise _unknown(name, known, "setting variable")


def _build(file_values: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    _check_env_names(env)
    known = [f.name for f in dataclasses.fields(Settings)]
    for section in file_values:
        if section not in known:
            raise _unknown(section, known, "section")
    sections: dict[str, Any] = {}
    for section_field in dataclasses.fields(Settings):
        section_cls = _hints(Settings)[section_field.name]
        raw_section = file_values.get(section_field.name, {})
        if not isinstance(raw_section, Mapping):
            raise ConfigError(section_field.name, "must be a table")
        sections[section_field.name] = _build_section(
            section_field.name, section_cls, raw_section, env
        )
    settings = _canonical_logins(Settings(**sections))
    validate(settings)
    return settings


def _canonical_logins(settings: Settings) -> Settings:
    """Logins as the web door stores them (NFKC), so a configured `ａｌｉｃｅ` is
    the `alice` who signs in through the proxy; a login NFKC cannot save is
    left for `validate` to refuse."""

    def canonical(login: str) -> str:
        try:
            return canonical_login(login)
        except LoginRefused:
            return login

    allowed = types.MappingProxyType(
        {key: canonical(login) for key, login in settings.telegram.allowed.items()})
    anonymous = settings.server.anonymous_user
    archived = settings.wyoming.archive_login
    return dataclasses.replace(
        settings,
        telegram=dataclasses.replace(settings.telegram, allowed=allowed),
        wyoming=dataclasses.replace(settings.wyoming,
                                    archive_login=canonical(archived) if archived else ""),
        server=dataclasses.replace(
            settings.server, anonymous_user=canonical(anonymous) if anonymous else ""),
    )


def _build_section(
    name: str, cls: type[Any], raw: Mapping[str, Any], env: Mapping[str, str]
) -> Any:
    hints = _hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    for key in raw:
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
            hint = f"; did you mean {name}.{close[0]}?" if close else ""
            raise ConfigError(f"{name}.{key}", f"unknown setting{hint}")
    values: dict[str, Any] = {}
    for key in names:
        env_name = f"{ENV_PREFIX}{name}_{key}".upper()
        full_key = f"{name}.{key}"
        if env_name in env:
            values[key] = _coerce(full_key, hints[key], env[env_name], from_env=True)
        elif key in raw:
            values[key] = _coerce(full_key, hints[key], raw[key], from_env=False)
    return cls(**values)


def _coerce(key: str, hint: Any, value: Any, *, from_env: bool) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        inner = next(a for a in args if a is not type(None))
        if value is None or value == "":
            return None
        return _coerce(key, inner, value, from_env=from_env)
    if hint is bool:
        return _to_bool(key, value)
    if hint is int:
        return _to_number(key, int, value)
    if hint is float:
        return _to_number(key, float, value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(key, "must be a string")
        return value
    if hint is Path:
        if not isinstance(value, str) or not value:
            raise ConfigError(key, "must be a non-empty path")
        return Path(value)
    if hint is Secret:
        if not isinstance(value, str):
            raise ConfigError(key, "must be a string")
        return Secret(value)
    if origin is tuple:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise ConfigError(key, "must be a list or a comma-separated string")
        texts = [str(item).strip() for item in items if str(item).strip()]
        if args and args[0] is str:
            return tuple(texts)
        return tuple(_to_network(key, text) for text in texts)
    if origin is Mapping:
        return _to_mapping(key, value)
    raise ConfigError(key, f"unsupported setting type {hint!r}")  # pragma: no cover


def _to_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"1", "true", "yes", "on"}:
        return True
    if isinstance(value, str) and value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(key, "must be true or false")


def _to_number(key: str, kind: type[int] | type[float], value: Any) -> int | float:
    if isinstance(value, bool):
        raise ConfigError(key, f"must be {'an integer' if kind is int else 'a number'}")
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise ConfigError(
            key, f"must be {'an integer' if kind is int else 'a number'}, got {value!r}"
        ) from None
    if kind is int and isinstance(value, float) and not value.is_integer():
        raise ConfigError(key, f"must be an integer, got {value!r}")
    return number


def _to_network(key: str, text: str) -> Network:
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ConfigError(key, f"{text!r} is not an address or CIDR network") from None


def _to_mapping(key: str, value: Any) -> Mapping[str, str]:
    if isinstance(value, str):
        try:
            value = orjson.loads(value) if value.strip() else {}
        except orjson.JSONDecodeError:
            raise ConfigError(key, "must be a JSON object") from None
    if not isinstance(value, Mapping):
        raise ConfigError(key, "must be an object of strings")
    result: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(v, str | int) or isinstance(v, bool):
            raise ConfigError(key, "values must be strings")
        result[str(k)] = str(v)
    return types.MappingProxyType(result)
