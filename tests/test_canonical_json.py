"""The stored JSON form (engines/canonical.py) is exactly json.dumps's compact, sorted form."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.canonical import canonical_json

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


def reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@given(JSON_VALUES)
def test_the_same_text_as_json_dumps(value: Any) -> None:
    assert canonical_json(value) == reference(value)


def test_what_json_cannot_hold_is_refused_and_leaves_nothing_behind() -> None:
    held = {"a": [1, 2]}
    with pytest.raises(TypeError, match="set"):
        canonical_json({"held": held, "z": {1, 2}})
    assert canonical_json(held) == '{"a":[1,2]}'
    assert canonical_json({"x": float("inf")}) == reference({"x": float("inf")})
