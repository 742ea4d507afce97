"""A game's options from plain values (JSON, or an engine's options as a game's meta keeps them)
to the lobby's typed GameOptions: the terminal client's `--options`, and a rematch's options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor

from tabletop.lobby.v1 import lobby_pb2
from wire.api import api


def enum_prefix(enum: EnumDescriptor) -> str:
    """`DRAW_REASON_` for enum DrawReason: what its value names start with (buf's style)."""
    return (
        "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(enum.name)).upper() + "_"
    )


def option_value(game: str, field: FieldDescriptor, value: Any) -> Any:
    """`value` as the proto field wants it; ValueError saying what it takes."""
    name = field.name
    enum = field.enum_type
    if enum is not None:
        prefix = enum_prefix(enum)
        allowed = [v.name.removeprefix(prefix).lower() for v in enum.values if v.number != 0]
        if isinstance(value, str):
            full = value if value.upper().startswith(prefix) else prefix + value
            found = enum.values_by_name.get(full.upper())
            if found is not None and found.number != 0:
                return found.number
        raise ValueError(f"bad {game} options: {name} is one of {', '.join(allowed)}")
    if field.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
        if isinstance(value, bool):
            return value
        raise ValueError(f"bad {game} options: {name} is true or false")
    if field.cpp_type in (FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**31:
            return value
        raise ValueError(f"bad {game} options: {name} is a whole number")
    if field.cpp_type == FieldDescriptor.CPPTYPE_STRING and isinstance(value, str):
        return value
    raise ValueError(f"bad {game} options: {name} cannot be set from the command line")


def game_options(game: str, options: Mapping[str, Any] | None) -> lobby_pb2.GameOptions:
    """Options given as plain values (`{"players": 2, "mode": "rounds", "max_plies": 100}`) as
    the lobby's GameOptions. Names are the options' names as the docs write them (the proto field
    names); enum values may be written as the docs name them (`rounds`) or as the proto does
    (`MODE_ROUNDS`). ValueError says what is wrong."""
    message = api(game).pb2.Options()
    fields = message.DESCRIPTOR.fields_by_name
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"bad {game} options: give a JSON object, e.g. '{{\"name\": value}}'")
    for name, value in (options or {}).items():
        field = fields.get(name)
        if field is None:
            valid = ", ".join(fields)
            known = f"{game} options are: {valid}" if valid else f"{game} has no options"
            raise ValueError(f"bad {game} options: unknown option {name!r}; {known}")
        setattr(message, name, option_value(game, field, value))
    wrapper = lobby_pb2.GameOptions()
    getattr(wrapper, game).CopyFrom(message)
    return wrapper
