"""`make bench` works, section by section: a quick pass (BENCH_QUICK=1: tiny durations and
counts, figures that mean nothing) runs every section to its end, so a change that breaks one
shows here, not months later. The figures themselves are `make bench`'s, never asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import SECTIONS
from tests.timing import patience

pytestmark = [pytest.mark.integration, pytest.mark.heavy]

ROOT = Path(__file__).resolve().parents[2]


def test_every_bench_section_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench"],
        cwd=ROOT,
        env={**os.environ, "BENCH_QUICK": "1"},
        capture_output=True,
        text=True,
        timeout=patience(200),
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    parts = done.stdout.split("== ")[1:]
    assert [part.splitlines()[0] for part in parts] == [title for title, _ in SECTIONS]
    for part in parts:
        assert len(part.strip().splitlines()) > 1, f"a section printed nothing: {part}"
    assert "skipped" not in done.stdout  # RLCard's virtualenv is there (make test-tools)
