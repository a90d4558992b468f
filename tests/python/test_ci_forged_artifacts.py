"""The posting jobs of the pull-request CI templates (ci_jobs.py runs them) read the artifact
of the job that built the pull request as untrusted data: a forged exit code, number, merge
base or comparison, or a link to the job's own secrets, is refused before any call to the
forge; a comparison of the most characters ab writes is posted whole; no comparison leaves
the comment as it was; the GitHub comment goes only to the pull request the run built."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from allocbench.gate import compare_format
from ci_jobs import MARKER, GitHub, GitLab

CHARS = compare_format.COMMENT_CHARS   # the most ab writes for a comment: the posters' cap
HEAD, BASE = "ab" * 20, "cd" * 20
COMPARISON = "## allocbench: 1 scenario\n\n✅ Gate passed.\n"
HONEST = {"exit-code": b"1\n", "pr-number": b"5\n", "merge-base": f"{BASE}\n".encode(),
          "comparison.md": COMPARISON.encode()}   # the GitLab job reads no number, no base


def artifact(folder: Path, files: dict[str, bytes | Path | None]) -> Path:
    """A hand-made allocbench-comment/: bytes are a file's content, a Path a link to it, None
    no such file."""
    folder.mkdir(parents=True)
    for name, content in files.items():
        if isinstance(content, Path):
            (folder / name).symlink_to(content)
        elif content is not None:
            (folder / name).write_bytes(content)
    return folder


def posting(ci, tmp_path: Path):
    run = ci(tmp_path / "checkout", tmp_path)   # no checkout: the posting job needs none
    if ci is GitHub:
        run.at(run.PR, HEAD)
    return run


TOO_LONG = ("allocbench-comment/comparison.md has more than 60,000 characters, the most "
            "allocbench ab writes for a comment")
FORGED = {
    "exit code with a command": ({"exit-code": b"0; rm -rf ~\n"}, (
        "allocbench-comment/exit-code is not an exit code of allocbench ab (0, 1, 2 or 3): "
        "'0; rm -rf ~\\n'")),
    "exit code 4": ({"exit-code": b"4"}, (
        "allocbench-comment/exit-code is not an exit code of allocbench ab (0, 1, 2 or 3): "
        "'4'")),
    "not UTF-8": ({"comparison.md": b"\xff\xfe"},
                  "allocbench-comment/comparison.md is not UTF-8 text"),
    "a character too many": ({"comparison.md": ("é" * (CHARS + 1)).encode()}, TOO_LONG),
    "more bytes than any comment": ({"comparison.md": ("😀" * (CHARS + 1)).encode()}, TOO_LONG),
    "no comparison": ({"comparison.md": None}, "allocbench-comment/comparison.md is missing"),
}


@pytest.mark.parametrize("case", FORGED)
@pytest.mark.parametrize("ci", [GitHub, GitLab], ids=["github", "gitlab"])
def test_a_forged_artifact_is_refused_before_any_call(ci, case, tmp_path):
    assert compare_format.COMMENT_CHARS == 60_000   # the number in the messages
    run = posting(ci, tmp_path)
    before = run.forge.read()
    files, message = FORGED[case]
    done = run.comment(artifact(tmp_path / "made", {**HONEST, **files}), HEAD)
    assert done.returncode == 2, done.stdout + done.stderr
    assert run.errors(done) == [run.refused(message)]
    assert run.forge.new_calls() == [] and run.forge.read() == before


@pytest.mark.parametrize("ci", [GitHub, GitLab], ids=["github", "gitlab"])
def test_the_posting_job_posts_a_comparison_of_the_most_characters_ab_writes(ci, tmp_path):
    """60,000 four-byte characters: 240,000 bytes, one comment (not cut, not refused)."""
    run = posting(ci, tmp_path)
    text = "😀" * CHARS
    done = run.comment(artifact(tmp_path / "made", {**HONEST, "comparison.md": text.encode()}),
                       HEAD)
    assert done.returncode == 0 and run.errors(done) == [], done.stdout + done.stderr
    *reads, written = run.forge.new_calls()
    run.check_reads(reads)
    assert (written["method"], written["path"]) == ("POST", run.listed)
    merge_base = BASE if ci is GitHub else ""   # GitLab's is the pipeline's (none set here)
    assert written["body"] == f"{MARKER}\n{text}\n{run.last_line(HEAD, merge_base)}\n"


@pytest.mark.parametrize("ci", [GitHub, GitLab], ids=["github", "gitlab"])
def test_no_comparison_leaves_the_comment_as_it_was(ci, tmp_path):
    """ab exited 2 (nothing else written), ab never ended (no exit code), no artifact."""
    run = posting(ci, tmp_path)
    before = run.forge.read()
    done = run.comment(artifact(tmp_path / "bad-input", {"exit-code": b"2\n"}), HEAD)
    assert (done.returncode, done.stdout.splitlines()) == (0, [run.left(2)])
    done = run.comment(artifact(tmp_path / "killed", {"comparison.md": b"## allocb"}), HEAD)
    never = (f"::notice::run {run.run_id} ended before ab did: the comment is left as it was"
             if ci is GitHub else
             "allocbench: allocbench-ab ended before ab did: the note is left as it was")
    assert (done.returncode, done.stdout.splitlines()) == (0, [never])
    done = run.comment(tmp_path / "nothing", HEAD)
    if ci is GitHub:
        never = (f"::notice::no allocbench-comment artifact in run {run.run_id} (it ended "
                 "before its comparison): the comment is left as it was")
    assert (done.returncode, done.stdout.splitlines()) == (0, [never])
    assert run.forge.new_calls() == [] and run.forge.read() == before


def test_the_github_comment_goes_only_to_the_pull_request_the_run_built(tmp_path):
    """The number is the artifact's: a malformed one, another pull request's, one that does
    not exist, one whose head moved on since the run (a newer run will comment), a fork's."""
    run = posting(GitHub, tmp_path)
    before = run.forge.read()

    def comment(number: bytes, **fields) -> tuple[subprocess.CompletedProcess, list[dict]]:
        shutil.rmtree(tmp_path / "made", ignore_errors=True)
        made = artifact(tmp_path / "made", {**HONEST, "pr-number": number, **fields})
        done = run.comment(made, HEAD, **({"repository": "mallory/tinytags", "branch": "main"}
                                          if number == b"8\n" else {}))
        return done, run.forge.new_calls()

    done, calls = comment(b"5 6\n")
    assert (done.returncode, run.errors(done), calls) == (2, [run.refused(
        "allocbench-comment/pr-number is not a pull-request number: '5 6\\n'")], [])
    done, calls = comment(b"5\n", **{"merge-base": b"HEAD\n"})
    assert (done.returncode, run.errors(done), calls) == (2, [run.refused(
        "allocbench-comment/merge-base is not a commit sha: 'HEAD\\n'")], [])
    done, calls = comment(b"6\n")
    assert (done.returncode, run.errors(done)) == (2, [run.refused(
        "allocbench-comment/pr-number names pull request #6, whose head is acme/tinytags:other,"
        f" not acme/tinytags:pr, which run {run.run_id} built")])
    assert [(c["method"], c["path"]) for c in calls] == [("GET", run.pull("6"))]
    done, calls = comment(b"404\n")
    assert (done.returncode, run.errors(done)) == (2, [run.refused(
        "pull request #404 (allocbench-comment/pr-number) could not be read")])
    assert [(c["method"], c["path"]) for c in calls] == [("GET", run.pull("404"))]
    newer = "ef" * 20
    run.at(run.PR, newer)
    done, calls = comment(b"5\n")
    assert (done.returncode, done.stdout.splitlines()) == (0, [
        f"::notice::pull request #5 is at {newer[:12]} now, run {run.run_id} built "
        f"{HEAD[:12]}: the run of the newer push will comment"])
    assert [(c["method"], c["path"]) for c in calls] == [("GET", run.pull("5"))]
    before["pulls"][run.pull("5")]["head"]["sha"] = newer
    assert run.forge.read() == before
    # A pull request from a fork: its run's artifact is posted, on its own thread.
    run.at("8", HEAD)
    done, calls = comment(b"8\n")
    assert done.returncode == 0 and run.errors(done) == [], done.stdout + done.stderr
    assert [(c["method"], c["path"]) for c in calls] == [
        ("GET", run.pull("8")), ("GET", f"repos/{run.REPOSITORY}/issues/8/comments"),
        ("POST", f"repos/{run.REPOSITORY}/issues/8/comments")]
    assert run.said(1003, created=True, number="8") in done.stdout.splitlines()


@pytest.mark.parametrize("links", [
    {"comparison.md": Path("/proc/self/environ")}, {"exit-code": Path("/proc/self/environ")},
    "folder"], ids=["comparison", "exit code", "folder"])
def test_the_gitlab_note_job_reads_no_link(links, tmp_path):
    """GitLab's artifacts keep links: one to /proc/self/environ would post the note job's own
    environment, token and all. A link is refused, the folder's included."""
    run = posting(GitLab, tmp_path)
    if links == "folder":
        made = artifact(tmp_path / "elsewhere", HONEST)
        (tmp_path / "linked").symlink_to(made)
        done, message = run.comment(tmp_path / "linked", HEAD), "allocbench-comment is not a folder"
    else:
        (name,) = links
        done = run.comment(artifact(tmp_path / "allocbench-comment", {**HONEST, **links}), HEAD)
        message = f"allocbench-comment/{name} is a symbolic link"
    assert done.returncode == 2, done.stdout + done.stderr
    assert run.errors(done) == [run.refused(message)]
    assert run.forge.new_calls() == []
