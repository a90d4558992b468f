"""allocbench sweep-table [REV ...] [--tags GLOB] [--range OLD..NEW]: the sweep table from the
store alone (nothing is built or run) — markdown for a pull request, or CSV.

Takes the revisions as `allocbench sweep` does; a revision the store lacks shows as · . Records
of other machines are used when this machine has none (allocation metrics do not depend on the
machine; the time and Ir/op tables say when their columns come from several). `--metric
instructions_per_op` shows the instructions that `sweep --instructions` counted; a revision
stored without them is ∅, with a note saying so.

`--stored` shows every revision the store holds for the machine and allocator instead, in the
report's sweep order (tags in version order, commits by date among them), without a
repository: the table of a store kept on its own (a CI cache, a git branch).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from allocbench.base.errors import UserError
from allocbench.base.fileio import write_atomically
from allocbench.history import selection, sweep as sweeping, sweep_plot, sweep_table, worktrees
from allocbench.history.store import Store, machine_id
from allocbench.commands import sweep as sweep_command


# sweep's arguments say what a sweep measures; this command measures nothing, it shows.
SHOWN = {"names": "revisions to show, in this order (after --tags and --range)",
         "repo": "the repository whose revisions to show [the current checkout]",
         "shard": "show only shard I of N (every N-th revision from the I-th)",
         "allocator": "the allocator backend whose records to show [system = glibc]"}


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    sweep_command.add_selection_arguments(parser)
    sweep_command.add_store_arguments(parser)
    sweep_command.add_table_arguments(parser)
    parser.add_argument("--format", choices=["markdown", "csv"], default="markdown",
                        help="markdown tables for a pull request, or one CSV [markdown]")
    parser.add_argument("--out", type=Path, metavar="FILE", help="write here, not to stdout")
    parser.add_argument("--stored", action="store_true",
                        help="every revision the store holds for --machine and --allocator, in "
                             "sweep order (no revisions to name, no repository needed)")
    for action in parser._actions:   # argparse has no public way to reword an argument
        action.help = SHOWN.get(action.dest, action.help)


def run(*, names: list[str], tags: str | None = None, range_: str | None = None,
        every: int = 1, shard: str | None = None, repo: Path | None = None,
        store: Path | None = None, machine: str | None = None, allocator: str = "system",
        metric: list[str] | None = None, changed_only: bool = False, plot: Path | None = None,
        format: str = "markdown", out: Path | None = None, stored: bool = False
        ) -> int:
    if plot is not None:
        sweep_plot.check_path(plot)
    if stored:
        if names or tags or range_ or shard:
            raise UserError("--stored shows every stored revision: give it without revisions, "
                            "--tags, --range or --shard")
        if store is None:
            raise UserError("--stored needs --store DIR (the store whose revisions to show)")
        columns = _stored_columns(store, machine_id(machine), allocator)
        return _show(columns, metric, changed_only, plot, format, out)
    repo = worktrees.toplevel(repo or Path.cwd())
    shas = sweeping.shard(selection.select(repo, names, tags, range_, every),
                          sweeping.parse_shard(shard))
    found = Store(store or worktrees.state_dir(repo) / "results")
    if not found.root.is_dir():
        raise UserError(f"{found.root}: no such store; give the folder a sweep wrote (its "
                        "--store, default <repo>/.allocbench/results), or run allocbench sweep "
                        "first")
    machine = machine_id(machine)
    columns = []
    for sha in shas:
        record = found.find(allocator, sha, machine, form="slim")   # slim.py: what tables read
        label = record["label"] if record else sweeping.label(repo, sha)
        columns.append(sweep_table.Column(sha, label, record))
    return _show(columns, metric, changed_only, plot, format, out)


def _stored_columns(store: Path, machine: str, allocator: str) -> list[sweep_table.Column]:
    """The store's history of `machine` and `allocator`, as the report orders it; an unreadable
    record is refused, as it is when a revision is named."""
    from allocbench.reports import inputs   # the report's reading and sweep order
    site = inputs.Site()
    inputs.from_store(store, [machine], [allocator], site)
    [history] = site.histories
    if site.problems:
        raise UserError(site.problems[0])
    return history.columns()


def _show(columns: list[sweep_table.Column], metric: list[str] | None, changed_only: bool,
          plot: Path | None, format: str, out: Path | None) -> int:
    metrics = sweep_table.metrics_of(metric)
    sweep_table.check_metrics(columns, metrics)
    render = sweep_table.markdown if format == "markdown" else sweep_table.csv_text
    text = render(columns, metrics, changed_only)
    if plot is not None:
        sweep_plot.plot(columns, metrics, plot, changed_only)
    if out is None:
        print(text, end="")
    else:
        write_atomically(out, text)
    return 0
