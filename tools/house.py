"""The house as its code says: our modules, what each imports (read with ast, nothing run), the
circles among them, the longest functions and the largest files.

    make house          # or: python -m tools.house

tests/test_layers.py checks the layers and their "nevers" on the same model.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "engines",
    "games",
    "wire",
    "runtime",
    "services",
    "gateway",
    "client",
    "bench",
    "tools",
)
LARGE_FILE_LINES = 600


@cache
def modules() -> dict[str, Path]:
    """Every module of ours, by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


@cache
def _tree(module: str) -> ast.Module:
    return ast.parse(modules()[module].read_text())


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_names(tree: ast.AST, type_checking: bool) -> set[str]:
    names: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
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
def imports(module: str, type_checking: bool = False) -> frozenset[str]:
    """What `module` imports: our modules by name, others by their top-level name. Imports under
    `if TYPE_CHECKING:` count only when `type_checking` (the type checker's view)."""
    ours = modules()
    found: set[str] = set()
    for name in _imported_names(_tree(module), type_checking):
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


def circles() -> list[list[str]]:
    """The import circles between our modules, TYPE_CHECKING imports counted: each strongly
    connected set of two or more modules (Tarjan), sorted."""
    graph = {m: sorted(n for n in imports(m, True) if n in modules() and n != m) for m in modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so a deep chain of imports cannot reach Python's recursion limit
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, at = work.pop()
            if at == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            for position in range(at, len(graph[node])):
                other = graph[node][position]
                if other not in index:
                    work += [(node, position + 1), (other, 0)]
                    break
                if other in on_stack:
                    low[node] = min(low[node], index[other])
            else:
                if low[node] == index[node]:
                    group: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])

    for module in graph:
        if module not in index:
            visit(module)
    return sorted(found)


@dataclass(frozen=True)
class Function:
    module: str
    name: str
    line: int
    lines: int


def functions() -> Iterator[Function]:
    """Every function and method of ours with its length in lines (decorators excluded)."""
    for module in modules():
        stack: list[tuple[ast.AST, str]] = [(_tree(module), "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    end = child.end_lineno or child.lineno
                    yield Function(
                        module, prefix + child.name, child.lineno, end - child.lineno + 1
                    )
                    stack.append((child, f"{prefix}{child.name}."))
                elif isinstance(child, ast.ClassDef):
                    stack.append((child, f"{prefix}{child.name}."))


def large_files(lines: int = LARGE_FILE_LINES) -> list[tuple[str, int]]:
    """Our files over `lines` lines, longest first."""
    counted = [
        (str(path.relative_to(ROOT)), len(path.read_text().splitlines()))
        for path in modules().values()
    ]
    return sorted(((name, n) for name, n in counted if n > lines), key=lambda item: -item[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--longest", type=int, default=10, help="how many functions to list")
    arguments = parser.parse_args()
    found = circles()
    print(f"import circles (TYPE_CHECKING imports counted): {len(found)}")
    for group in found:
        print("  " + " <-> ".join(group))
    print(f"\nthe {arguments.longest} longest functions:")
    longest = sorted(functions(), key=lambda f: -f.lines)[: arguments.longest]
    for function in longest:
        where = f"{modules()[function.module].relative_to(ROOT)}:{function.line}"
        print(f"  {function.lines:5d}  {function.name}  ({where})")
    big = large_files()
    print(f"\nfiles over {LARGE_FILE_LINES} lines: {len(big)}")
    for name, n in big:
        print(f"  {n:5d}  {name}")


if __name__ == "__main__":
    main()
