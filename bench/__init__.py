"""`make bench`: the platform's speed figures (bench/__main__.py runs every section).

With BENCH_QUICK=1 every section runs briefly instead (tiny durations and counts): the figures
mean nothing then, but every section is shown to work (tests/integration/test_bench.py), so
none can break unnoticed."""

from __future__ import annotations

import os
from typing import TypeVar

QUICK = os.environ.get("BENCH_QUICK", "") == "1"

T = TypeVar("T")


def sized(full: T, quick: T) -> T:
    """`full`, or `quick` in a quick pass."""
    return quick if QUICK else full
