"""The API never breaks silently: within `tabletop.*.v1` a change may only add (fields,
messages, methods, enum values), checked with `buf breaking` against the last release's API
(proto/released.binpb, written by `make api-release`; docs/api.md, "API stability"). The check
itself is tested: removing or renumbering a field, or removing a method, fails it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.timing import patience

ROOT = Path(__file__).resolve().parents[1]
BUF = ROOT / ".tools" / "node_modules" / ".bin" / "buf"
RELEASED = ROOT / "proto" / "released.binpb"


def breaking(proto_dir: Path) -> subprocess.CompletedProcess[str]:
    assert BUF.exists(), f"{BUF} is missing: `make test-tools` installs it"
    return subprocess.run(
        [str(BUF), "breaking", "--against", str(RELEASED)],
        cwd=proto_dir,
        capture_output=True,
        text=True,
        timeout=patience(120),
        check=False,
    )


def test_the_api_keeps_everything_of_the_last_release() -> None:
    done = breaking(ROOT / "proto")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("path", "pattern", "replacement", "said"),
    [
        ("tabletop/common/v1/common.proto", r"\n  string name = 3;\n", "\n", "deleted"),
        ("tabletop/common/v1/common.proto", r"string player_id = 2;", "string player_id = 9;", ""),
        (
            "tabletop/lobby/v1/lobby.proto",
            r"\n  rpc WhoAmI\(WhoAmIRequest\) returns \(WhoAmIResponse\);",
            "",
            "WhoAmI",
        ),
        ("tabletop/common/v1/common.proto", r"int32 index = 1;", "int64 index = 1;", "type"),
    ],
)
def test_a_change_that_breaks_clients_is_caught(
    tmp_path: Path, path: str, pattern: str, replacement: str, said: str
) -> None:
    copy = tmp_path / "proto"
    shutil.copytree(ROOT / "proto", copy, ignore=shutil.ignore_patterns("released.binpb"))
    target = copy / path
    text = target.read_text()
    changed, count = re.subn(pattern, replacement, text, count=1)
    assert count == 1, f"{pattern!r} is not in {path} any more: update this test"
    target.write_text(changed)
    done = breaking(copy)
    assert done.returncode != 0, "buf breaking let a breaking change through"
    assert said in done.stdout + done.stderr
