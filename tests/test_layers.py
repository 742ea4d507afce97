"""The house's layers, read from the code's own imports (ast): engines (pure) <- games <- wire <-
runtime <- services, gateway, client; and the "nevers" that keep them so.

The model of the code is tools/house.py's (`make house` prints its circles and longest parts).
Imports under `if TYPE_CHECKING:` are for the type checker only and are not counted, except in
the search for circles. A game's
package is a vertical slice: its rules and bots are pure like the engines, its adapter speaks
protobuf, its board draws for the terminal.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache

import pytest

from tools.house import PACKAGES, ROOT, circles, imports, modules, reach

PURE_GAME_MODULES = (
    "rules",
    "bots",
    "layout",
    "solver",
    "expectimax",
    "study",
    "belief",
    "history",
    "evaluation",
)
"""Modules of a game's package that are engine code (pure); `games.replay`, `games.arena`,
`games.clock` and the declarations (`games`, `games.<game>`, `games.declaration`) are pure too."""
NOT_PURE = ("grpc", "redis", "google", "rich", "tabletop", "prometheus_client", "jwt", "uvloop")
DATABASE = ("psycopg", "psycopg_pool", "runtime.db")


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


def test_no_import_circle_between_modules() -> None:
    """Not even one the type checker alone sees (under TYPE_CHECKING): a circle is two modules
    that cannot be read, tested or moved apart."""
    assert circles() == []


def test_the_gateway_holds_no_database() -> None:
    """The internet-facing process reaches no database code: accounts are the accounts
    service's, reached over the internal link."""
    for module in [m for m in modules() if m.split(".")[0] == "gateway"]:
        found = {m for r in reach(module) | {module} for m in imports(r) if m in DATABASE}
        assert not found, f"{module} reaches {found}"


def test_no_domain_imports_another_domains_store() -> None:
    """A domain's store (services.<domain>.store) is its own: another domain asks it through its
    service or reads what it publishes (e.g. services.ratings.cache), never its tables."""
    found = {
        (module, m)
        for module in modules()
        if module.startswith("services.")
        for m in imports(module)
        if m.startswith("services.")
        and m.split(".")[2:3] == ["store"]
        and m.split(".")[1] != module.split(".")[1]
    }
    assert not found


ACCOUNTS_TABLE_READ_ELSEWHERE: set[str] = set()
"""Modules outside the accounts domain whose SQL still names its table: none (the deal of the
day's table asks the accounts service when an account was made)."""


def test_only_the_accounts_domain_names_its_table() -> None:
    """Every other domain asks the accounts service for accounts (the lobby and the ratings
    consumers: runtime/accounts_client.py): no SQL of theirs reads or writes the accounts'
    table."""
    table = re.compile(r"\b(FROM|JOIN|UPDATE|INTO)\s+accounts\b", re.IGNORECASE)
    others = [m for m in modules() if m.startswith("services.") and m.split(".")[1] != "accounts"]
    assert {"services.lobby.following", "services.ratings.scores"} <= set(others)
    found = {m for m in others if table.search(modules()[m].read_text())}
    assert found == ACCOUNTS_TABLE_READ_ELSEWHERE == set()
