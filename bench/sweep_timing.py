#!/usr/bin/python3
"""Wall time of `allocbench sweep` on the synthetic twelve-commit history of the tests.

usage: bench/sweep_timing.py [--start REV] [BUILD_DIR]
       (default build/release; run `./allocbench test` or `./allocbench run` first so that it
       exists)

Installs BUILD_DIR into a temporary prefix, writes the history (tests/python/
synthetic_history.py) and times, each as a fresh `./allocbench sweep` process:
  cold            12 revisions, nothing checked out, built or stored; ccache off
  cold, ccache    the same again in a second copy of the history, ccache on and warm
  again           the same sweep once more: everything comes from the store
  one new commit  a 13th commit, then the range up to it: one revision built and run
  edited graft    one scenario file of the graft changed: every revision is measured again,
                  each build recompiling only the plugin (the subject did not change)
The time pass is on (2 repetitions of 1 ms) so that each run does what a sweep does.
--start REV sweeps from REV instead of v1.0 (e.g. v1.3: 4 revisions, 5 with the new commit),
for a quick smoke run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
import synthetic_history as synth  # noqa: E402


def sweep(history: synth.History, prefix: Path, *, ccache: bool, range_: str
          ) -> tuple[float, int]:
    env = dict(os.environ, CCACHE_DISABLE="0" if ccache else "1")
    command = [str(ROOT / "allocbench"), "sweep", "--range", range_, "--repo",
               str(history.repo), "--graft", str(history.bench()),
               f"--cmake-arg=-DCMAKE_PREFIX_PATH={prefix}", "--target", synth.TARGET,
               "--plugin-path", synth.PLUGIN, "--runner", str(prefix / "bin" / "allocbench-run"),
               "--repetitions", "2", "--min-time", "0.001"]
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode not in (0, 1):
        sys.exit(f"sweep failed ({done.returncode}):\n{done.stderr}")
    built = done.stderr.count(": building ")
    return seconds, built


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    *args], check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", default="v1.0", metavar="REV",
                        help="the oldest revision swept (a tag of the history) [v1.0]")
    parser.add_argument("build", nargs="?", type=Path, default=ROOT / "build" / "release")
    args = parser.parse_args()
    build, start = args.build, args.start
    with tempfile.TemporaryDirectory() as temp:
        temp = Path(temp)
        prefix = temp / "prefix"
        subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)], check=True,
                       capture_output=True)
        (temp / "a").mkdir()
        (temp / "b").mkdir()
        first, second = synth.make_history(temp / "a"), synth.make_history(temp / "b")
        range_ = f"{start}..v2.0"
        rows = [("cold, ccache off", *sweep(first, prefix, ccache=False, range_=range_))]
        rows.append(("cold, ccache warm", *sweep(second, prefix, ccache=True, range_=range_)))
        rows.append(("again (all stored)", *sweep(first, prefix, ccache=True, range_=range_)))
        readme = first.repo / "README.md"
        readme.write_text(readme.read_text() + "\nMore docs.\n")
        git(first.repo, "commit", "-qam", "Docs")
        rows.append(("one new commit", *sweep(first, prefix, ccache=True,
                                              range_=f"{start}..main")))
        spans = first.bench() / "spans.cc"
        spans.write_text(spans.read_text() + "\n// an edited scenario file\n")
        revisions = 1 + int(subprocess.run(   # the range's revisions, its old end included
            ["git", "-C", str(first.repo), "rev-list", "--count", "--first-parent",
             f"{start}..main"], check=True, capture_output=True, text=True).stdout)
        rows.append((f"edited graft ({revisions})", *sweep(first, prefix, ccache=True,
                                                          range_=f"{start}..main")))
    print(f"{'sweep of the synthetic history':<32} {'wall s':>7} {'builds':>7}")
    for name, seconds, built in rows:
        print(f"{name:<32} {seconds:>7.1f} {built:>7}")


if __name__ == "__main__":
    main()
