"""Every command the docs tell people to type exists: each `make TARGET` named in the README or
docs/ is a target of the Makefile (`make -n` accepts it), and each `tabletop COMMAND` is a
command of the client (its `--help` answers). The commands themselves run elsewhere in the
tests (make test runs the suite, `make run` is tests/integration/test_processes.py, every
`make bench` section tests/integration/test_bench.py, the client's commands
tests/integration/test_client*.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.timing import patience

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
TEXT = "\n".join(path.read_text(encoding="utf-8") for path in DOCS)
CODE = [
    *re.findall(r"`([^`\n]+)`", TEXT),  # inline code
    *(
        line
        for block in re.findall(r"```[a-z]*\n(.*?)```", TEXT, re.S)
        for line in block.split("\n")
    ),
]
"""What the docs show as code: inline spans and the lines of code blocks."""


def _commands(program: str) -> list[str]:
    pattern = re.compile(rf"^\s*(?:\$ )?{program} ([a-z][a-z0-9-]*)")
    return sorted({m.group(1) for code in CODE if (m := pattern.match(code))})


MAKE = _commands("make")
TABLETOP = _commands("tabletop")


def test_the_docs_name_commands() -> None:
    assert {"run", "test", "bench"} <= set(MAKE)
    assert {"play", "register", "tokens", "rating"} <= set(TABLETOP)


@pytest.mark.parametrize("target", MAKE)
def test_each_documented_make_target_exists(target: str) -> None:
    done = subprocess.run(
        ["make", "-n", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=patience(60),
        check=False,
    )
    assert done.returncode == 0, f"make {target}: {done.stderr[-500:]}"


@pytest.mark.parametrize("command", TABLETOP)
def test_each_documented_tabletop_command_exists(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "client.cli", command, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=patience(60),
        check=False,
    )
    assert done.returncode == 0, f"tabletop {command}: {done.stderr[-500:]}"
