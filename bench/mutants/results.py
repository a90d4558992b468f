"""The results: every mutant's record in a JSON file (rewritten atomically after each mutant,
so --resume loses nothing), the reviewed list of equivalent mutants, and the markdown table
per area with the survivors."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .areas import AREAS
from .model import stable_key

RESULTS = ("killed", "timed-out", "survived", "not-covered", "not-compiled", "equivalent")
FIELDS = ("id", "area", "file", "line", "operator", "diff", "result", "by", "seconds")
COLUMNS = (("sampled", None), ("killed", "killed"), ("timed out", "timed-out"),
           ("equivalent", "equivalent"), ("survived", "survived"),
           ("not covered", "not-covered"), ("not compiled", "not-compiled"))


def write_json(path: Path, records: list[dict], meta: dict) -> None:
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(json.dumps({"allocbench_mutate": 1, **meta, "mutants": records},
                               indent=1, ensure_ascii=False) + "\n")
    os.replace(temp, path)


def record(**values: object) -> dict:
    """One mutant's record, its fields in FIELDS' order (all of them, no others)."""
    assert set(values) == set(FIELDS), sorted(set(values) ^ set(FIELDS))
    return {field: values[field] for field in FIELDS}


def read_json(path: Path) -> list[dict]:
    """The records of an earlier run, for --resume; a ValueError naming the file and the
    JSON path of what is wrong."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a results file of bench/mutate.py ({e}); "
                         "remove it or drop --resume") from None
    mutants = doc.get("mutants") if isinstance(doc, dict) else None
    if not isinstance(mutants, list):
        raise ValueError(f"{path}: $.mutants is not a list; remove the file or drop --resume")
    for n, r in enumerate(mutants):
        if not isinstance(r, dict) or set(r) != set(FIELDS) or r["result"] not in RESULTS:
            raise ValueError(f"{path}: $.mutants[{n}] is not a record with the fields "
                             f"{', '.join(FIELDS)} and a result of {', '.join(RESULTS)}; "
                             "remove the file or drop --resume")
    return mutants


def read_equivalents(path: Path) -> dict[str, str]:
    """The reviewed list: `id  reason` a line (ids without their line number match too);
    `#` starts a comment."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split(" #", 1)[0].strip() if not line.startswith("#") else ""
        if line:
            mutant_id, _, reason = line.partition(" ")
            found[stable_key(mutant_id)] = reason.strip()
    return found


def apply_equivalents(records: list[dict], equivalents: dict[str, str]) -> list[str]:
    """Marks the listed mutants equivalent (reason in `by`); the stale entries (matching no
    mutant of the records)."""
    used = set()
    for r in records:
        key = stable_key(r["id"])
        if key in equivalents:
            used.add(key)
            r["result"], r["by"] = "equivalent", equivalents[key]
    return sorted(set(equivalents) - used)


def kill_rate(counts: dict[str, int]) -> str:
    judged = counts["sampled"] - counts["equivalent"] - counts["not-compiled"]
    return f"{100 * (counts['killed'] + counts['timed-out']) / judged:.0f} %" if judged else "–"


def table(records: list[dict]) -> str:
    lines = ["| area | " + " | ".join(name for name, _ in COLUMNS) + " | kill rate |",
             "|---|" + "---:|" * (len(COLUMNS) + 1)]
    rows = [(area, [r for r in records if r["area"] == area]) for area in AREAS]
    rows.append(("all", records))
    for area, mine in rows:
        if not mine:
            continue
        counts = {"sampled": len(mine), **{k: sum(r["result"] == k for r in mine)
                                           for k in RESULTS}}
        cells = [str(counts[key or "sampled"]) for _, key in COLUMNS]
        lines.append(f"| {area} | " + " | ".join(cells) + f" | {kill_rate(counts)} |")
    return "\n".join(lines)


def survivors(records: list[dict]) -> str:
    lines = ["| id | result | diff |", "|---|---|---|"]
    for r in records:
        if r["result"] in ("survived", "not-covered"):
            diff = r["diff"].replace("|", "\\|").replace("`", "'")
            lines.append(f"| `{r['id']}` | {r['result']} | `{diff}` |")
    return "\n".join(lines)


def markdown(records: list[dict], stale: list[str]) -> str:
    text = table(records) + "\n\nSurvivors:\n\n" + survivors(records) + "\n"
    if stale:
        text += "\nStale entries of the equivalent list (no such mutant):\n\n" + \
            "".join(f"- `{s}`\n" for s in stale)
    return text
