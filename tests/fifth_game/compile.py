"""Generate tic-tac-toe's protobuf code into a directory and make `tabletop.tictactoe.v1`
importable from it (the fifth game's proto lives with the tests, not in proto/)."""

from __future__ import annotations

from pathlib import Path

import grpc_tools
from grpc_tools import protoc

import tabletop

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def compile_proto(out: Path) -> None:
    """Generate into `out`/tabletop/tictactoe/v1/ and add it to the `tabletop` package."""
    proto = HERE / "proto"
    include = Path(grpc_tools.__file__).parent / "_proto"
    code = protoc.main([
        "protoc", f"-I{proto}", f"-I{ROOT / 'proto'}", f"-I{include}",
        f"--python_out={out}", f"--grpc_python_out={out}",
        str(proto / "tabletop" / "tictactoe" / "v1" / "tictactoe.proto"),
    ])  # fmt: skip
    if code != 0:
        raise RuntimeError("protoc failed on tictactoe.proto")
    package = out / "tabletop"
    for folder in (package, package / "tictactoe", package / "tictactoe" / "v1"):
        (folder / "__init__.py").touch()
    generated = str(out / "tabletop")
    if generated not in tabletop.__path__:
        tabletop.__path__.append(generated)
