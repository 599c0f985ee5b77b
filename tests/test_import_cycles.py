"""No import cycles among kenning's modules: imports point down (DESIGN.md section 2).

Every ``import`` and ``from ... import`` counts, wherever it stands: at the top,
inside a function, or under ``if TYPE_CHECKING:`` (a cycle hidden from the
interpreter is still a cycle in the design). ``from pkg import name`` is an
edge to ``pkg.name`` when that is a module, else to ``pkg``; a module importing
its own package (``from . import x`` in ``pkg/mod.py``) is an edge only to the
module ``x``, never to ``pkg`` itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kenning

SRC = Path(kenning.__file__).resolve().parent.parent


def module_files(src: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``src``, by dotted name (a package by its own name)."""
    out: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imported_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement may refer to (module, and module.name per name)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    return [target, *(f"{target}.{alias.name}" for alias in node.names)]


def import_graph(src: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (by any import statement anywhere in it)."""
    modules = module_files(src, package)
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _imported_names(node, name, path.name == "__init__.py"):
                while target and target not in modules:  # an attribute, not a module
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    work: list[tuple[str, list[str]]] = []  # the depth-first path, each with its unvisited edges

    def enter(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        work.append((v, sorted(edges[v])))

    for root in sorted(edges):
        if root in index:
            continue
        enter(root)
        while work:
            v, todo = work[-1]
            if todo:
                w = todo.pop()
                if w not in index:
                    enter(w)
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _describe(edges: dict[str, set[str]], component: list[str]) -> str:
    members = set(component)
    links = [f"  {m} -> {t}" for m in component for t in sorted(edges[m] & members)]
    return "cycle: " + ", ".join(component) + "\n" + "\n".join(links)


def test_kenning_has_no_import_cycles() -> None:
    edges = import_graph(SRC, "kenning")
    assert len(edges) > 50  # the walk found the package
    found = cycles(edges)
    assert not found, "import cycles among kenning modules:\n" + "\n".join(
        _describe(edges, c) for c in found
    )


def test_the_detector_finds_a_cycle(tmp_path: Path) -> None:
    """A throwaway package with cycles of each kind the check must see."""
    pkg = tmp_path / "cyc"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from .b import thing\n",  # a -> b, relative
        "b.py": "def f():\n    import cyc.a\n",  # b -> a, function-local
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub import d\n",
        "sub/__init__.py": "",
        "sub/d.py": "from .. import c\n",  # d -> c through the parent package
        "e.py": "import cyc.a\n",  # e -> a, no cycle
        "sub/f.py": "from . import d\nfrom .. import e\n",  # imports its own package: no edge to it
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    edges = import_graph(tmp_path, "cyc")
    assert edges["cyc.sub.f"] == {"cyc.sub.d", "cyc.e"}
    assert cycles(edges) == [["cyc.a", "cyc.b"], ["cyc.c", "cyc.sub.d"]]
