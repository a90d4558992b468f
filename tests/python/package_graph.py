"""The import graph of the allocbench package, read from its sources (never imported): which
module imports which, and the rules of its parts.

A part is a folder of scripts/allocbench/ (base, harness, history, ...); its __init__.py
docstring ends with `May import: allocbench.base, allocbench.harness.` (or `nothing of
allocbench`), the parts its modules may import besides their own. The modules beside the parts
(cli.py, __main__.py, __init__.py) are the entry and may import any part. Every import counts,
the ones inside functions too: a lazy import is still an arrow.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

TOP = ""   # the part of cli.py, __main__.py and the package's own __init__.py


@dataclass(frozen=True)
class Arrow:
    source: str       # the importing module, e.g. allocbench.commands.ab
    target: str       # the imported module, e.g. allocbench.gate.compare
    line: int
    private: str = ""  # a private name taken from the target (`from m import _x`, `m._x`)


def modules(package: Path) -> dict[str, Path]:
    """Every module of the package folder, by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = (package.name, *path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def arrows(package: Path) -> list[Arrow]:
    """Every import of one module of the package by another, with the private names taken."""
    known = modules(package)
    return [arrow for name, path in known.items() for arrow in arrows_of(path, name, known)
            if arrow.source != arrow.target]


def arrows_of(path: Path, name: str, known: dict[str, Path]) -> list[Arrow]:
    """The imports of one file (`name`, e.g. allocbench.gate.compare, or a script's own name)
    of the modules in `known`."""
    root = next(iter(known)).split(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    bound: dict[str, str] = {}   # a name bound to a module of the package -> that module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    out.append(Arrow(name, alias.name, node.lineno))
                    if alias.asname:
                        bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[:len(here.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != root:
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in known:            # from package import module
                    out.append(Arrow(name, full, node.lineno))
                    bound[alias.asname or alias.name] = full
                elif source in known:        # from module import name
                    private = alias.name if alias.name.startswith("_") else ""
                    out.append(Arrow(name, source, node.lineno, private))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in bound and node.attr.startswith("_") and \
                not node.attr.startswith("__"):
            out.append(Arrow(name, bound[node.value.id], node.lineno, node.attr))
    return out


RULE = re.compile(r"May import:\s*(.*?)\.?\s*$", re.S)


def rules(package: Path) -> dict[str, set[str]]:
    """Each part's allowed parts, from the `May import:` sentence that ends its docstring."""
    found = {}
    for init in sorted(package.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        match = RULE.search(doc)
        if match is None:
            raise AssertionError(f"{init}: its docstring must end with 'May import: …' (the "
                                 "parts its modules may import, or 'nothing of allocbench')")
        text = " ".join(match.group(1).split())
        found[init.parent.name] = set() if text.startswith("nothing of") else set(
            re.findall(rf"{package.name}\.(\w+(?:\.\w+)?)", text))
    return found


def part_of(module: str, parts: set[str]) -> str:
    """allocbench.gate.compare -> 'gate'; allocbench.cli, allocbench -> TOP."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 and pieces[1] in parts else TOP


def upward(package: Path) -> list[str]:
    """Every arrow from a part to one its rule does not allow (a part importing the entry
    modules, cli.py and __main__.py, included), as messages that name the line and the fix."""
    allowed = rules(package)
    problems = []
    for arrow in arrows(package):
        source, target = (part_of(m, set(allowed)) for m in (arrow.source, arrow.target))
        if source in (TOP, target) or arrow.target == package.name:   # the root: __version__
            continue
        may = allowed[source]
        if target in may or arrow.target.split(".", 1)[1] in may:   # a part, or one module
            continue
        problems.append(f"{arrow.source} (line {arrow.line}) imports {arrow.target}: part "
                        f"'{source}' may import only {sorted(may) or 'nothing of allocbench'} "
                        "(the 'May import' of its __init__.py); move the code to the part it "
                        "belongs to")
    return problems


def circles(package: Path) -> list[list[str]]:
    """Every circle of the module graph, each as the modules along it (first == last)."""
    graph: dict[str, set[str]] = {name: set() for name in modules(package)}
    for arrow in arrows(package):
        graph[arrow.source].add(arrow.target)
    found, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found
