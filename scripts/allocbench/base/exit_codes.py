"""The exit codes of every `allocbench` command and of allocbench-run, as one table.

CI acts on the number alone, so the number has one meaning everywhere. CODES says, per code,
what it means, which commands (and allocbench-run) can end with it and what is then written.
The CLI returns these constants; docs/exit-codes.md's table is `markdown()` (print it with
`PYTHONPATH=scripts python3 -m allocbench.base.exit_codes`), and tests/python/test_exit_codes.py
checks that the two are equal and that every (command, code) pair has a test.
"""

from __future__ import annotations

from dataclasses import dataclass

OK = 0
FAILED = 1            # the code under test did something to look at
BAD_INPUT = 2         # bad input or usage; nothing written
NOT_MEASURED = 3      # a build or allocbench-run failed, or an internal error
INTERRUPTED = 130     # SIGINT or SIGTERM (128 + SIGINT, as shells report it)

RUNNER = "allocbench-run"
COMMANDS = ("run", "test", "compare", "ab", "calibrate", "sweep", "sweep-table", "bisect",
            "merge", "report", "profile")
EVERY = COMMANDS + (RUNNER,)


@dataclass(frozen=True)
class ExitCode:
    code: int
    meaning: str                   # markdown; commands it names are in `returned_by`
    returned_by: tuple[str, ...]   # commands of COMMANDS, and RUNNER
    written: str                   # what the command leaves behind, markdown


CODES: tuple[ExitCode, ...] = (
    ExitCode(
        OK,
        "everything was measured, and nothing gated regressed (`test`: every stage ran tests "
        "and all of them passed)",
        EVERY,
        "results, report, comment, table"),
    ExitCode(
        FAILED,
        "the code under test did something to look at: a gated regression, which includes "
        "an instance that failed in the candidate, an allocation metric the gate could not "
        "judge (an *unstable* sampled B/op) and a `[[sites]]` budget it could not judge "
        "(`compare`, `ab`); an instance that failed "
        "— crashed, hung, threw, exited, skipped — (`run`, `sweep`, `allocbench-run`); a "
        "revision that did not build or run (`sweep`); no single commit to name, because "
        "skipped commits hide it or good and bad have the same value (`bisect`); a test that "
        "failed, or a stage that ran no test at all (`test`); a store record that could not "
        "be read, shown in the site as an unreadable revision, or a bisect's kept result that "
        "could not be read, left out (`report`); a site table that does not sum to its count "
        "pass, a nondeterministic instance (`profile`)",
        ("run", "test", "compare", "ab", "sweep", "bisect", "report", "profile", RUNNER),
        "all of it, the failure with its reason"),
    ExitCode(
        BAD_INPUT,
        "bad input or usage: a flag, a file, a configuration, a revision name, a damaged "
        "results file or store record, a `--runner` that is not one — one line naming the "
        "file, the field and the fix; or Debian packages missing when not root (the exact "
        "`apt-get install` line to run is printed)",
        EVERY,
        "nothing: no results file, nothing stored"),
    ExitCode(
        NOT_MEASURED,
        "the measurement could not be made although the command was right: a build failed "
        "(`run`, `test`, `ab`; `calibrate`, `sweep` and `bisect` when they build "
        "allocbench-run, without `--runner`), the allocbench-run they started died or "
        "failed (`run`, `ab`, `calibrate`), allocbench-run could not start a process or "
        "thread for an instance (`allocbench-run`), or an internal error anywhere (one line; "
        "`ALLOCBENCH_DEBUG=1` adds a command's traceback)",
        EVERY,
        "what was measured before it"),
    ExitCode(
        INTERRUPTED,
        "interrupted by SIGINT or SIGTERM (one is enough; children are stopped, never left "
        "running)",
        EVERY,
        "what was measured: `FILE.partial`, the store"),
)


def pairs() -> list[tuple[str, int]]:
    """Every documented (command, code), commands in EVERY's order."""
    return [(who, c.code) for c in CODES for who in EVERY if who in c.returned_by]


def returned_by_cell(returned_by: tuple[str, ...]) -> str:
    if set(returned_by) == set(EVERY):
        return f"every command, `{RUNNER}`"
    return ", ".join(f"`{who}`" for who in EVERY if who in returned_by)


def markdown() -> str:
    """The table of docs/exit-codes.md."""
    lines = ["| code | meaning | returned by | what is written |", "|---|---|---|---|"]
    lines += [f"| {c.code} | {c.meaning} | {returned_by_cell(c.returned_by)} | {c.written} |"
              for c in CODES]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
