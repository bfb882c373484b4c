"""No import cycle between apportion's modules, imports inside functions included.

Every module is parsed (nothing is imported) and every `import` statement anywhere in it (at
the top, in a function, in a method) is an edge: deferring an import into a function hides a
cycle from the interpreter, it does not remove it. Relative imports are resolved against the
module's package, and `from pkg import name` points at the submodule `pkg.name` when that is a
module, at `pkg` (its `__init__`) otherwise.

Two kinds of import are not edges:

- imports under `if TYPE_CHECKING:`. They never run; they exist so that annotations can name a
  type without the import, and mypy checks them. A cycle through them costs nothing at run
  time and changes nothing in the order modules load.
- the parent package a submodule lives in. Python initialises `pkg/__init__.py` before any
  `pkg.child`, whoever asks, so every child "depends" on its parent and a package whose
  `__init__` imports its children would be a cycle with each of them. That is the language's
  loading order, not a dependency anybody wrote, so `from pkg import child` (or `import
  pkg.child`) counts only as an edge to `pkg.child`. What does count is a child importing a
  *name* from its parent's `__init__` (`from pkg import Thing` where `Thing` is defined in a
  sibling and re-exported): that child then needs the package's façade, which needs the
  child, a real cycle, fixed by importing `Thing` from the sibling that defines it.

The cycles are the graph's strongly connected components of more than one module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "apportion"


def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, whether it is a package's `__init__`)."""
    found = {}
    for path in (root / package).rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`) blocks."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            hidden.update(id(inner) for branch in node.body for inner in ast.walk(branch))
    return hidden


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        parts = package.split(".")
        base = ".".join([*parts[: len(parts) - node.level + 1], node.module or ""]).rstrip(".")
    else:
        base = node.module or ""
    for alias in node.names:
        yield f"{base}.{alias.name}"
        yield base


def import_graph(modules: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """Module → the modules of this package it imports anywhere in its text."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        hidden = _type_checking_only(tree)
        package = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in hidden:
                continue
            targets = list(_targets(node, package))
            if isinstance(node, ast.ImportFrom):
                # Pairs (pkg.name, pkg): the submodule when `name` is one, else the package.
                targets = [
                    sub if sub in modules else base
                    for sub, base in zip(targets[::2], targets[1::2], strict=True)
                ]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_of_the_package_is_in_an_import_cycle() -> None:
    graph = import_graph(module_files())
    found = cycles(graph)
    described = [
        " ↔ ".join(c) + "\n  " + "\n  ".join(f"{m} → {sorted(graph[m] & set(c))}" for m in c)
        for c in found
    ]
    assert not found, "\n".join(described)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_finder_sees_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import f\n",
            "pkg/b.py": "def f():\n    from . import a\n    return a\n",
            "pkg/c.py": "from pkg import a\n",
        },
    )
    graph = import_graph(module_files(tmp_path, "pkg"))
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg.c"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]


def test_a_package_importing_its_children_is_no_cycle_but_a_reexport_is(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "from pkg.child import Thing\nfrom pkg import other\n",
        "pkg/child.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from pkg.other import Other\nfrom pkg import sibling\nclass Thing: ...\n",
        "pkg/sibling.py": "X = 1\n",
        "pkg/other.py": "from ..pkg import child\nclass Other: ...\n",
    }
    _write(tmp_path, files)
    assert cycles(import_graph(module_files(tmp_path, "pkg"))) == []
    # A child that takes a name from its parent's façade needs the parent, which needs it.
    _write(tmp_path, {"pkg/sibling.py": "from pkg import Thing\n"})
    assert cycles(import_graph(module_files(tmp_path, "pkg"))) == [
        ["pkg", "pkg.child", "pkg.other", "pkg.sibling"]
    ]
