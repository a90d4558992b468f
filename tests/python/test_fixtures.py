"""The hand-made results under tests/python/data describe what allocbench-run really writes: the
same field list (so a fixture can never gate a metric that the harness does not gate), the same
context sections, and budgets that name only metrics the real results gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allocbench.gate import config
from conftest import count_only

DATA = Path(__file__).parent / "data"
FIXTURES = sorted(p for p in DATA.rglob("*.json") if "fields" in json.loads(p.read_text()))


@pytest.fixture(scope="module")
def fresh(runner, ground_truth, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("fresh") / "r.json"
    count_only(runner, ground_truth, out, "--filter", "^ground_truth/mixed$")
    return json.loads(out.read_text())


def test_there_are_fixtures_to_check():
    assert {p.name for p in FIXTURES} >= {"base.json", "cand.json", "results_small.json"}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(DATA)))
def test_a_fixture_has_the_runners_field_list(path, fresh):
    assert json.loads(path.read_text())["fields"] == fresh["fields"]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(DATA)))
def test_a_fixture_has_the_runners_context_sections(path, fresh):
    context = json.loads(path.read_text())["context"]
    assert set(context) == set(fresh["context"])
    for key, section in fresh["context"].items():
        if isinstance(section, dict):  # time and revision are null in a count-only run
            assert set(context[key]) == set(section), key


@pytest.mark.parametrize("path", sorted(DATA.rglob("*.toml")), ids=lambda p: p.name)
def test_a_fixtures_budgets_name_metrics_the_runner_gates(path, fresh):
    exact = [f["key"] for f in fresh["fields"] if f["gate"] == "exact"]
    config.load(path).check_metrics(exact)  # a UserError here fails the test
