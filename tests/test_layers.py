"""The house's layers, read from the code's own imports (ast): engines (pure) <- games <- wire <-
runtime <- services, gateway, client; and the "nevers" that keep them so.

Imports under `if TYPE_CHECKING:` are for the type checker only and are not counted. A game's
package is a vertical slice: its rules and bots are pure like the engines, its adapter speaks
protobuf, its board draws for the terminal.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engines", "games", "wire", "runtime", "services", "gateway", "client", "bench")
PURE_GAME_MODULES = (
    "rules",
    "bots",
    "layout",
    "solver",
    "expectimax",
    "study",
    "belief",
    "history",
)
"""Modules of a game's package that are engine code (pure); `games.replay`, `games.arena`,
`games.clock` and the declarations (`games`, `games.<game>`) are pure too."""
NOT_PURE = ("grpc", "redis", "google", "rich", "tabletop", "prometheus_client", "jwt", "uvloop")


@cache
def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        stack.extend(ast.iter_child_nodes(node))
    return names


@cache
def imports(module: str) -> frozenset[str]:
    """What `module` imports: our modules by name, others by their top-level name."""
    ours = modules()
    found: set[str] = set()
    for name in _imported_names(ast.parse(ours[module].read_text())):
        if name.split(".")[0] in PACKAGES:
            while name not in ours and "." in name:
                name = name.rsplit(".", 1)[0]  # `from games import LEVELS` is games
            if name in ours:
                found.add(name)
        else:
            found.add(name.split(".")[0])
    return frozenset(found)


def reach(start: str) -> set[str]:
    """Every one of our modules `start` imports, directly or through others (with the packages
    that hold them, which Python imports first)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += [m for m in imports(module) if m in modules()]
    return seen - {start}


def _pure(module: str) -> bool:
    parts = module.split(".")
    if parts[0] == "engines":
        return True
    if parts[0] != "games":
        return False
    if len(parts) == 1 or parts[1] in ("replay", "arena", "clock"):
        return True
    return (len(parts) == 2 and parts[1] not in ("adapter", "board")) or parts[
        -1
    ] in PURE_GAME_MODULES


def test_the_layers_are_what_the_code_says() -> None:
    """Guards against this test reading nothing: the layers exist and import each other."""
    assert "engines.contract" in modules()
    assert "games.solo.rules" in modules()
    assert "engines.contract" in imports("games.solo.rules")
    assert "games" in imports("wire.api")
    assert "wire.errors" in imports("runtime.redis")


def test_engines_and_game_rules_are_pure() -> None:
    """No I/O, no protobuf, no other layer: the same code serves services, bots, benches, tests."""
    for module in [m for m in modules() if _pure(m)]:
        outside = {name for name in imports(module) if name.split(".")[0] in NOT_PURE}
        assert not outside, f"{module} imports {outside}"
        ours = {name for name in imports(module) if name in modules()}
        impure = {name for name in ours if not _pure(name)}
        assert not impure, f"{module} imports {impure}"
        if module.startswith("engines"):
            assert all(name.startswith("engines") for name in ours), f"{module} imports {ours}"


def test_the_gateway_imports_no_engine() -> None:
    for module in [m for m in modules() if m.split(".")[0] == "gateway"]:
        engines = {m for m in reach(module) if m.startswith("engines") or _game_part(m)}
        assert not engines, f"{module} reaches {engines}"


def _game_part(module: str) -> bool:
    """A module of a game's package beyond its declaration (rules, bots, adapter, board...).
    (The platform's own modules of `games` that reach an engine, like games.replay, are found
    by what they import.)"""
    parts = module.split(".")
    return len(parts) >= 3 and ".".join(parts[:2]) in _declarations()


@cache
def _declarations() -> set[str]:
    return {m for m in modules() if m.count(".") == 1 and (modules()[m].name == "__init__.py")}


def test_a_running_gateway_loads_no_engine() -> None:
    """The same, as Python sees it: importing the gateway's process loads no engine module."""
    code = (
        "import sys, gateway.__main__\n"
        "loaded = [m for m in sys.modules if m.startswith('engines') or "
        "(m.startswith('games.') and m.count('.') > 1)]\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("outer", ["client", "services.bots"])
def test_clients_and_bots_import_no_service_internals(outer: str) -> None:
    internals = ("services.game", "services.lobby", "services.matchmaker")
    for module in [m for m in modules() if m == outer or m.startswith(outer + ".")]:
        found = {m for m in reach(module) if m.startswith(internals)}
        assert not found, f"{module} reaches {found}"


def test_lower_layers_never_import_higher_ones() -> None:
    below = {
        "wire": {"runtime", "services", "gateway", "client", "bench", "engines"},
        "runtime": {"services", "gateway", "client", "bench"},
        "games": {"wire", "runtime", "services", "gateway", "client", "bench"},
    }
    for module in modules():
        banned = below.get(module.split(".")[0], set())
        found = {m for m in imports(module) if m in modules() and m.split(".")[0] in banned}
        assert not found, f"{module} imports {found}"


def test_no_import_cycles_between_top_level_packages() -> None:
    graph: dict[str, set[str]] = {package: set() for package in PACKAGES}
    for module in modules():
        package = module.split(".")[0]
        graph[package] |= {m.split(".")[0] for m in imports(module) if m in modules()} - {package}
    visiting: list[str] = []
    done: set[str] = set()

    def visit(package: str) -> None:
        if package in done:
            return
        assert package not in visiting, "import cycle: " + " -> ".join([*visiting, package])
        visiting.append(package)
        for used in sorted(graph[package]):
            visit(used)
        visiting.pop()
        done.add(package)

    for package in PACKAGES:
        visit(package)
    assert graph["gateway"] <= {"runtime", "wire", "games"}, graph["gateway"]
    assert "engines" not in graph["wire"]


def test_player_sessions_and_the_server_form_no_circle() -> None:
    """The server holds player sessions; sessions route through gateway.routing and know no
    server, not even for the type checker."""
    assert "gateway.server" not in reach("gateway.session")
    assert "gateway.server" not in (ROOT / "gateway" / "session.py").read_text()
    assert "gateway.server" not in reach("gateway.routing")


def test_the_gateway_holds_no_database() -> None:
    """Accounts are the accounts service's (services/accounts): no gateway module reaches
    PostgreSQL's driver or the database helpers."""
    for module in [m for m in modules() if m.split(".")[0] == "gateway"]:
        found = {m for m in imports(module) if m in ("psycopg", "psycopg_pool")}
        found |= {m for m in reach(module) if m == "runtime.db"}
        assert not found, f"{module} reaches {found}"
