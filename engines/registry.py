"""The games the platform knows, by id. Engines are imported on first use."""

from __future__ import annotations

import importlib
from functools import cache

from engines.contract import Rules

_MODULES: dict[str, str] = {
    "esoloe": "engines.esoloe",
    "solo": "engines.solo",
    "solace": "engines.solace",
    "zoxso": "engines.zoxso",
}


def names() -> list[str]:
    """Every registered game id, sorted."""
    return sorted(_MODULES)


@cache
def get(name: str) -> Rules:
    """The rules of game `name`. Raises KeyError with the known names for an unknown one."""
    try:
        module = _MODULES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r}; games are: {', '.join(names())}") from None
    rules: Rules = importlib.import_module(module).RULES
    return rules
