"""allocbench merge STORE ... [--into DIR]: combines the stores of a sharded sweep (one per CI
job) into one, so that `allocbench sweep-table` shows the whole sweep.

For the same machine, allocator and commit, a record that measured something beats a failure,
else the newer one wins. The bisects kept in each store (history/bisected.py) are copied too;
for the same bisect, the last store given wins.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from allocbench.history import bisected, store, worktrees


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("stores", nargs="+", type=Path, metavar="STORE",
                        help="store folders to copy from (each a sweep's --store)")
    parser.add_argument("--into", type=Path, metavar="DIR",
                        help="the store to merge into [<current repository>/.allocbench/results]")


def run(*, stores: list[Path], into: Path | None = None) -> int:
    if into is None:
        into = worktrees.state_dir(worktrees.toplevel(Path.cwd())) / "results"
    copied, kept = store.merge(store.Store(into), [store.Store(path) for path in stores])
    found = [doc for path in stores for doc in bisected.read(path)[0]]
    for doc in found:
        bisected.write(into, {k: v for k, v in doc.items() if k != "bisect_version"})
    print(f"allocbench: merged {len(stores)} store(s) into {into}: {copied} records copied, "
          f"{kept} kept{f', {len(found)} bisects' if found else ''}", file=sys.stderr)
    return 0
