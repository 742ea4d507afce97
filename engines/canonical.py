"""The one JSON form the platform stores states, events and statuses in: compact, keys sorted
(the same value always gives the same text), exactly as `json.dumps(value, sort_keys=True,
separators=(",", ":"))` writes it.

A move's commit encodes its state, events and status: the C encoder is made once here, not at
every call as `json.dumps` makes it (half of a small value's encoding time)."""

from __future__ import annotations

import json
from json import encoder
from typing import Any


def _unencodable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_make: Any = getattr(encoder, "c_make_encoder", None)
_ENCODE = (
    None
    if _make is None
    else _make(
        None,  # no markers: a shared set would keep what a failed call left in it
        _unencodable,
        encoder.encode_basestring_ascii,
        None,  # indent
        ":",
        ",",
        True,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
)


def canonical_json(value: Any) -> str:
    """`value` as compact JSON with its keys sorted."""
    if _ENCODE is None:  # a Python without the C encoder
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "".join(_ENCODE(value, 0))
