"""Layering of the product packages, read from their source with ``ast`` (nothing is imported): no import cycle
between modules, ``connect/api/`` depends on nothing else of ours, and ``connect`` on neither ``converters`` nor
``connectors``. Every import statement counts, those inside functions too (a lazy import hides a cycle, it does
not remove it); ``from pkg import name`` is an import of the module ``pkg.name`` when there is one."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("connect", "connectors", "converters", "rest", "spark_jobs")


@dataclass(frozen=True)
class Import:
    """One import of module ``target`` by module ``source``, at ``line`` of the source's file."""

    source: str
    target: str
    line: int


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root`` by dotted name (a package is its ``__init__.py``)."""
    modules: dict[str, Path] = {}
    for package in packages:
        # a compiled extension module is known by its stub (``_extjson.pyi``): a module that imports none of ours
        for path in sorted([*(root / package).rglob("*.py"), *(root / package).rglob("*.pyi")]):
            if path.suffix == ".pyi" and path.with_suffix(".py").exists():
                continue
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _resolve(name: str, modules: Mapping[str, Path]) -> str | None:
    """The module ``name`` stands for: itself, or its longest prefix that is one of ours (``a.b.f`` where ``f`` is
    a function of ``a.b``); None for anything not ours."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def imports_of(module: str, path: Path, modules: Mapping[str, Path]) -> list[Import]:
    """The imports of our modules that ``module`` (at ``path``) makes, anywhere in its source."""
    is_package = path.name == "__init__.py"
    found: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                base = package[:len(package) - (node.level - 1)]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            # `from pkg import name`: the module pkg.name when it is one, else pkg itself
            targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in modules else stem for alias in node.names]
        else:
            continue
        for name in targets:
            target = _resolve(name, modules)
            if target is not None and target != module:
                found.append(Import(module, target, node.lineno))
    return found


def import_graph(root: Path, packages: Iterable[str]) -> dict[str, list[Import]]:
    """Each module of ``packages`` with the imports of our modules it makes."""
    modules = module_files(root, packages)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def _components(graph: Mapping[str, list[Import]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            module, i = work.pop()
            if i == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            edges = graph.get(module, [])
            if i < len(edges):
                work.append((module, i + 1))
                target = edges[i].target
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            if low[module] == index[module]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                components.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
    return components


def _cycle_within(graph: Mapping[str, list[Import]], members: set[str]) -> list[Import]:
    """A shortest cycle through the first of ``members`` (a strongly connected component), by breadth-first search."""
    start = min(members)
    came: dict[str, Import] = {}
    queue = [start]
    for module in queue:
        for edge in graph.get(module, []):
            if edge.target == start:
                cycle = [edge]
                while cycle[0].source != start:
                    cycle.insert(0, came[cycle[0].source])
                return cycle
            if edge.target in members and edge.target not in came:
                came[edge.target] = edge
                queue.append(edge.target)
    raise AssertionError(f"no cycle within {sorted(members)}")


def find_cycles(graph: Mapping[str, list[Import]]) -> list[list[Import]]:
    """One cycle of imports (each ``target`` the next one's ``source``, the last back to the first) per group of
    modules that import each other; empty when there is none."""
    return [_cycle_within(graph, set(component)) for component in _components(graph) if len(component) > 1]


def _describe(edges: Iterable[Import], modules: Mapping[str, Path]) -> str:
    return "\n".join(f"  {e.source} -> {e.target}  ({modules[e.source].relative_to(REPO_ROOT)}:{e.line})"
                     for e in edges)


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    return import_graph(REPO_ROOT, PACKAGES)


@pytest.fixture(scope="module")
def modules() -> dict[str, Path]:
    return module_files(REPO_ROOT, PACKAGES)


def test_no_import_cycle_between_modules(graph: dict[str, list[Import]], modules: dict[str, Path]) -> None:
    cycles = find_cycles(graph)
    report = "\n".join(f"import cycle {n}:\n{_describe(cycle, modules)}" for n, cycle in enumerate(cycles, 1))
    print(report)
    assert not cycles, report


def test_connect_api_imports_nothing_else_of_ours(graph: dict[str, list[Import]], modules: dict[str, Path]) -> None:
    outside = [e for source, edges in graph.items() if _within(source, "connect.api")
               for e in edges if not _within(e.target, "connect.api")]
    assert not outside, "connect.api imports other modules of ours:\n" + _describe(outside, modules)


def test_connect_imports_neither_converters_nor_connectors(graph: dict[str, list[Import]],
                                                           modules: dict[str, Path]) -> None:
    upward = [e for source, edges in graph.items() if _within(source, "connect")
              for e in edges if _within(e.target, "converters") or _within(e.target, "connectors")]
    assert not upward, "connect imports converters/connectors:\n" + _describe(upward, modules)


# The checker itself, on a small package written here (so the tests above cannot pass by seeing no imports).

def _write(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checker_resolves_every_kind_of_import(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\nfrom pkg.b import thing\nimport os\n",
        "pkg/b.py": "def f():\n    from . import c\n    from .sub.d import g\n    return c, g\nthing = 1\n",
        "pkg/c.py": "import pkg.sub.d\nfrom pkg import thing_of_init\n",
        "pkg/sub/__init__.py": "from .. import a\n",
        "pkg/sub/d.py": "from .. import c\nimport other\n",
        "other/__init__.py": "",
    })
    graph = import_graph(tmp_path, ["pkg"])
    edges = {m: sorted({(e.target, e.line) for e in es}) for m, es in graph.items()}
    assert edges == {
        "pkg": [],
        "pkg.a": [("pkg.b", 1), ("pkg.b", 2)],
        "pkg.b": [("pkg.c", 2), ("pkg.sub.d", 3)],  # inside a function, relative
        "pkg.c": [("pkg", 2), ("pkg.sub.d", 1)],  # `from pkg import name` of a non-module: the package
        "pkg.sub": [("pkg.a", 1)],
        "pkg.sub.d": [("pkg.c", 1)],  # `other` is not among the packages checked
    }


def test_checker_finds_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "import pkg.c\n",
        "pkg/c.py": "def late():\n    from .a import x\n",
        "pkg/d.py": "import os\n",
    })
    [cycle] = find_cycles(import_graph(tmp_path, ["pkg"]))
    assert [(e.source, e.target, e.line) for e in cycle] == [("pkg.a", "pkg.b", 1), ("pkg.b", "pkg.c", 1),
                                                              ("pkg.c", "pkg.a", 2)]
    _write(tmp_path, {"pkg/c.py": "def late():\n    from . import d\n"})
    assert find_cycles(import_graph(tmp_path, ["pkg"])) == []


def test_checker_reports_each_cycle(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from . import b\n",
        "pkg/b.py": "from . import a\n",
        "pkg/c.py": "from . import a, d\n",
        "pkg/d.py": "from . import e\n",
        "pkg/e.py": "def f():\n    import pkg.c\n",
    })
    cycles = find_cycles(import_graph(tmp_path, ["pkg"]))
    assert sorted([(e.source, e.target) for e in cycle] for cycle in cycles) == [
        [("pkg.a", "pkg.b"), ("pkg.b", "pkg.a")],
        [("pkg.c", "pkg.d"), ("pkg.d", "pkg.e"), ("pkg.e", "pkg.c")],
    ]
