"""The outputs of compare: the pull-request comment (golden), console table, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allocbench.base.errors import UserError
from allocbench.gate import compare, compare_format, compare_json, config

DATA = Path(__file__).parent / "data" / "compare"


@pytest.fixture(scope="module")
def comparison() -> compare.Comparison:
    return compare.compare(compare.load_side(DATA / "base.json"),
                           compare.load_side(DATA / "cand.json"),
                           config.load(DATA / "allocbench.toml"))


def test_markdown_comment_matches_golden(comparison):
    # To regenerate after an intended change: write compare_format.markdown(...) to the file
    # and review the diff.
    assert compare_format.markdown(comparison, "any") == (DATA / "comment.md").read_text()


def test_markdown_puts_the_summary_first_and_regressions_before_improvements(comparison):
    text = compare_format.markdown(comparison, "any")
    lines = text.splitlines()
    # The fixtures' CPU-time samples are their wall samples: each time verdict comes twice.
    assert lines[2] == ("**Found 5 regressions and 5 improvements; 12 metrics unchanged, "
                        "2 unstable, 1 within budget, 1 failed, 1 scenario added, 1 scenario "
                        "removed.**")
    assert text.index("### Regressions") < text.index("### Improvements") < text.index(
        "<details>")
    assert "- 🟥 `ns_per_op` [+1.84 ns; +2.04 ns] or [+15.2%; +17.1%], p = 3.7e-05" in lines


def test_console_lists_what_changed_most_urgent_first(comparison):
    text = compare_format.console(comparison, "alloc")
    rows = [line.split()[0] for line in text.splitlines()[6:] if line and not
            line.startswith(("added", "removed", "Gate"))]
    assert rows == ["failed"] + ["worse"] * 5 + ["unstable"] * 2 + ["allowed"] + ["better"] * 5
    assert "worse     ground_truth/sized/bytes:24                   bytes_per_op" in text
    assert text.rstrip().endswith(
        "Gate failed: 4 gated regressions (--fail-on alloc) in ground_truth/sized/bytes:24 "
        "(bytes_per_op, allocs_per_op, frees_per_op); ground_truth/fails (failed).")
    assert "same" not in text.split("Gate")[0]
    assert "same" in compare_format.console(comparison, "alloc", show_all=True)


def test_json_has_every_metric_and_the_gate(comparison):
    doc = json.loads(compare_json.to_json(comparison, "time"))
    assert doc["summary"] == {"worse": 5, "better": 5, "same": 12, "unstable": 2,
                              "allowed": 1, "failed": 1}
    assert doc["gate"]["failed"] == [
        {"instance": "ground_truth/sized/bytes:24", "metric": "ns_per_op"},
        {"instance": "ground_truth/sized/bytes:24", "metric": "cpu_ns_per_op"},
        {"instance": "ground_truth/fails", "metric": "failed"}]
    sized = next(i for i in doc["instances"] if i["name"] == "ground_truth/sized/bytes:24")
    assert (sized["scenario"], sized["args"], sized["threads"]) == ("ground_truth/sized",
                                                                   {"bytes": 24}, 1)
    bytes_per_op = sized["exact"][0]
    assert (bytes_per_op["metric"], bytes_per_op["delta"], bytes_per_op["verdict"]) == (
        "bytes_per_op", 96, "worse")
    assert [t["metric"] for t in sized["time"]] == ["ns_per_op", "cpu_ns_per_op"]
    time = sized["time"][0]
    assert time["interval"]["relative_low"] > 0.05 and time["verdict"] == "worse"
    assert (doc["added"], doc["removed"]) == (["strings/precomputed_name"],
                                              ["ground_truth/growing_vector"])


def test_json_carries_the_samples_and_reads_back_as_the_same_comparison(comparison):
    doc = json.loads(compare_json.to_json(comparison, "time"))
    sized = next(i for i in doc["instances"] if i["name"] == "ground_truth/sized/bytes:24")
    base = json.loads((DATA / "base.json").read_text())
    measured = next(r for r in base["results"] if r["name"] == "ground_truth/sized/bytes:24")
    assert sized["time"][0]["base_forks"] == [measured["time"]["samples_ns_per_op"]]
    again, fail_on = compare_json.from_json(doc, "c.json")
    assert fail_on == "time"
    assert compare_format.markdown(again, "time") == compare_format.markdown(comparison, "time")
    assert compare_json.to_json(again, "time").replace('"files": 0', '"files": 1') == \
        compare_json.to_json(comparison, "time")


@pytest.mark.parametrize("damage, message", [
    (lambda d: d["instances"][0]["time"][0].update(base_mean="fast"),
     "instances[0].time[0].base_mean is a string (\"fast\"), not a finite number"),
    (lambda d: d["instances"][1]["exact"].append(7), "instances[1].exact[3] is 7, not an object"),
    (lambda d: d.pop("settings"), "settings is missing, not an object"),
    (lambda d: d["gate"].update(fail_on="never"), "gate.fail_on is a string (\"never\"), not one"),
    (lambda d: d["instances"][0]["time"][0]["cand_forks"][0].append(None),
     "instances[0].time[0].cand_forks[0][12] is null, not a finite number")])
def test_a_damaged_comparison_json_names_the_field(comparison, damage, message):
    doc = json.loads(compare_json.to_json(comparison, "any"))
    damage(doc)
    with pytest.raises(UserError) as error:
        compare_json.from_json(doc, "c.json")
    assert str(error.value).startswith(f"c.json: {message}")
    assert str(error.value).endswith(f"; {compare_json.FIX}")


@pytest.mark.parametrize("value, text", [(96, "+96"), (-31, "-31"), (1.8412, "+1.84"),
                                         (0.1234, "+0.123"), (12.345, "+12.3"),
                                         (1234.5, "+1,234"), (0.0, "+0")])
def test_signed_numbers(value, text):
    assert compare_format.number(value, signed=True) == text


def test_small_relative_changes_keep_their_digits():
    change = compare.exact_change("peak_live_bytes", "B", [213288], [213320], 0.0, "0")
    assert compare_format.exact_delta(change) == "+32 B (+0.015%)"


def _many(copies: int) -> compare.Comparison:
    """The fixtures' instances `copies` times over, each copy renamed: a big pull request."""
    sides = []
    for name in ("base.json", "cand.json"):
        side = compare.load_side(DATA / name)
        doc = json.loads(json.dumps(side.docs[0]))
        doc["results"] = [{**r, "name": f"{r['name']}#{i}", "scenario": f"{r['scenario']}#{i}"}
                          for i in range(copies) for r in doc["results"]]
        sides.append(compare.Side(side.path, side.label, (doc,)))
    return compare.compare(*sides, config.load(DATA / "allocbench.toml"))


def test_a_comment_too_long_for_github_leaves_the_table_out_then_cuts_its_lists():
    big = _many(30)
    whole = compare_format.markdown(big, "any", max_chars=None)
    assert len(whole) > compare_format.COMMENT_CHARS and "<details>\n<summary>All" in whole
    fitted = compare_format.markdown(big, "any")
    assert len(fitted) <= compare_format.COMMENT_CHARS
    assert "<summary>All" not in fitted
    metrics = whole.count("\n| `")   # the table's rows
    assert f"The table of all {metrics} metrics is left out" in fitted
    # What remains is the whole comment up to its table: every regression is still listed.
    assert fitted.split("<sub>The table")[0] == whole.split("<details>\n<summary>All")[0]
    huge = _many(50)
    fitted = compare_format.markdown(huge, "any")
    whole_lines = compare_format.markdown(huge, "any", max_chars=None).split("<details>")[0]
    assert len(fitted) <= compare_format.COMMENT_CHARS
    kept = fitted.split("\n\n… ")[0]
    cut = int(fitted.split("\n\n… ")[1].split(" more lines")[0].replace(",", ""))
    assert whole_lines.startswith(kept + "\n")
    assert cut == len(whole_lines[:-1].split("\n")) - len(kept.split("\n"))
    assert fitted.rstrip().endswith("</sub>")   # the method line is kept


def _leaves(value, path=""):
    """(JSON path, value) of every scalar of a document, in the form compare_json names them."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _set(doc, path: str, value) -> None:
    keys = [int(k) if k.isdigit() else k
            for k in path.replace("[", ".").replace("]", "").split(".")]
    for k in keys[:-1]:
        doc = doc[k]
    doc[keys[-1]] = value


def test_every_field_of_a_comparison_json_is_checked_or_recomputed(comparison):
    """An object where any scalar belongs is refused, naming that field, unless the field is
    derived: then reading ignores it and writing again recomputes it (a check dropped from
    from_json, or a derived value trusted from the file, fails here)."""
    text = compare_json.to_json(comparison, "any")
    unchecked = []
    for path, _ in _leaves(json.loads(text)):
        doc = json.loads(text)
        _set(doc, path, {"x": 1})
        try:
            again, _ = compare_json.from_json(doc, "c.json")
        except UserError as e:
            if not str(e).startswith(f"c.json: {path} "):
                unchecked.append((path, str(e)[:120]))
        else:
            if compare_json.to_json(again, "any").replace('"files": 0', '"files": 1') != text:
                unchecked.append((path, "accepted, and changed what is read"))
    assert unchecked == []
