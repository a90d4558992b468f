"""The Python package's parts keep their layers: no arrow from a part to one its __init__.py
does not allow, no circle, no module (nor bench script) taking another's private names, and no
flat module beside the parts but the entry. The checker is tested on packages made here, so a
checker that finds nothing cannot pass for a clean package."""

from __future__ import annotations

from pathlib import Path

import pytest

import package_graph as graph

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "scripts" / "allocbench"
ENTRY = {"allocbench", "allocbench.cli", "allocbench.__main__"}


def test_no_part_imports_a_part_its_rule_does_not_allow():
    assert graph.upward(PACKAGE) == []


def test_the_module_graph_has_no_circle():
    assert graph.circles(PACKAGE) == []


def test_no_module_takes_another_modules_private_names():
    assert [a for a in graph.arrows(PACKAGE) if a.private] == []


def test_bench_scripts_use_public_functions_only():
    known = graph.modules(PACKAGE)
    taken = [(script.name, a.line, a.target, a.private)
             for script in sorted((ROOT / "bench").glob("*.py"))
             for a in graph.arrows_of(script, f"bench.{script.stem}", known) if a.private]
    assert taken == []


def test_beside_the_parts_are_only_the_entry_modules():
    parts = set(graph.rules(PACKAGE))
    flat = {m for m in graph.modules(PACKAGE) if graph.part_of(m, parts) == graph.TOP}
    assert flat == ENTRY, "a module beside the parts: move it into the part it belongs to"


def test_the_layers_run_one_way():
    """The rules themselves: base imports nothing, and no two parts may import each other."""
    allowed = graph.rules(PACKAGE)
    assert allowed["base"] == set()
    assert set(allowed) == {"base", "harness", "history", "imports", "sites", "gate", "reports",
                            "commands"}
    both = sorted((a, b) for a in allowed for b in allowed[a] if a in allowed.get(b, ()))
    assert both == []


# --- the checker, on packages written here ------------------------------------------------

def package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "allocbench"
    rules = {"low": "nothing of allocbench", "mid": "allocbench.low",
             "top": "allocbench.low, allocbench.mid"}
    for part, rule in rules.items():
        (root / part).mkdir(parents=True)
        (root / part / "__init__.py").write_text(f'"""The {part} part.\n\nMay import: {rule}.\n"""\n')
    (root / "__init__.py").write_text('"""root"""\n__version__ = "1"\n')
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_the_checker_names_an_upward_import_even_inside_a_function(tmp_path):
    root = package(tmp_path, {
        "low/a.py": "def f():\n    from allocbench.mid import b\n    return b\n",
        "mid/b.py": "from allocbench.low import a\n",
        "top/c.py": "from allocbench.mid import b\nfrom allocbench import low\n"})
    assert graph.upward(root) == [
        "allocbench.low.a (line 2) imports allocbench.mid.b: part 'low' may import only "
        "nothing of allocbench (the 'May import' of its __init__.py); move the code to the "
        "part it belongs to"]
    assert graph.circles(root) == [["allocbench.low.a", "allocbench.mid.b", "allocbench.low.a"]]


def test_the_checker_finds_a_circle_inside_a_part_and_reads_relative_imports(tmp_path):
    root = package(tmp_path, {"top/x.py": "from . import y\n",
                              "top/y.py": "from allocbench.top.x import thing\n",
                              "top/z.py": "from allocbench.top import y\n"})
    assert graph.upward(root) == []
    assert graph.circles(root) == [["allocbench.top.x", "allocbench.top.y", "allocbench.top.x"]]


def test_the_checker_sees_a_private_name_taken_either_way(tmp_path):
    root = package(tmp_path, {"low/a.py": "def _hidden():\n    pass\n",
                              "mid/b.py": "from allocbench.low.a import _hidden\n",
                              "mid/c.py": "from allocbench.low import a as alias\nalias._hidden()\n"
                                          "alias.__name__\n"})
    assert sorted((a.source, a.private) for a in graph.arrows(root) if a.private) == [
        ("allocbench.mid.b", "_hidden"), ("allocbench.mid.c", "_hidden")]


def test_a_part_without_its_rule_is_refused_with_the_fix(tmp_path):
    root = package(tmp_path, {})
    (root / "mid" / "__init__.py").write_text('"""The mid part."""\n')
    with pytest.raises(AssertionError, match=r"mid/__init__.py: its docstring must end with "
                                             r"'May import: …'"):
        graph.rules(root)


def test_a_rule_may_allow_one_module_of_a_part(tmp_path):
    root = package(tmp_path, {"mid/b.py": "", "low/a.py": "from allocbench.mid import b\n"})
    (root / "low" / "__init__.py").write_text('"""May import: allocbench.mid.b."""\n')
    assert graph.upward(root) == []
    (root / "low" / "a.py").write_text("from allocbench.mid import b\nfrom allocbench.top import c\n")
    (root / "top" / "c.py").write_text("")
    assert [p.split(":")[0] for p in graph.upward(root)] == [
        "allocbench.low.a (line 2) imports allocbench.top.c"]
