"""Settings on a temporary data folder, with sections' fields replaced."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transcriber.settings import Settings, load_settings

SettingsFactory = Callable[..., Settings]


def settings_on(data_dir: Path, **sections: dict[str, Any]) -> Settings:
    """The defaults with the data folder `data_dir`; keyword args replace whole sections'
    fields. Example: settings_on(folder, pipeline={"workers": 0})."""
    base = load_settings(environ={"TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir)})
    replaced = {
        name: dataclasses.replace(getattr(base, name), **values)
        for name, values in sections.items()
    }
    return dataclasses.replace(base, **replaced)
