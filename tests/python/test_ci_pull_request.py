"""The pull-request CI templates: as files (which job holds which token, runs what, keeps
what), and run (ci_jobs.py runs each job as the CI would) on a pull request pushed again and
again, against fake `gh` and `curl` (fake_forge.py) that keep the server's comments in a JSON
file: the next push sees what the last one wrote. The thread starts with a comment that
carries the marker, by someone else: it is never edited.

The pushes: one more 32-byte block per span (a regression: one comment, the gate fails),
another commit on top (the same comment, edited), a head with only a comment changed (passes,
the comment edited again), then bad input (exit code 2) and a head that does not build (3):
the gate fails with ab's one-line message as its error, the comment untouched. What the pull
request's code could see at every compile holds no token. The `uses:` steps (checkout, cache,
upload, download) are not run: allocbench-tool, the second checkout, is a link to this
checkout, and the templates' ALLOCBENCH_AB_OPTIONS is replaced by the quickest settings (one
fork, no time pass, no site profiles, this build's allocbench-run)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from allocbench import cli
from allocbench.gate import compare_format
from ci_jobs import (COMMENTER, GITHUB, GITLAB, MARKER, SCOPE, GitHub, GitLab, checkout,
                     github_step, gitlab_jobs)
from docs_pages import page
from test_ab import SPANS, commit, git
from test_ci_workflows import allocbench_commands

# The pull request's regression: one 32-byte block more per span (the scenario's Span is 48).
BLOCK = "char* block = new char[32]; allocbench::DoNotOptimize(block); delete[] block;"
COMMENT = "// a span is started and finished in the same op"
REGRESSION = "- 🟥 `bytes_per_op` +32 B (48 → 80, +66.7%)"
MIN_TIME = ("allocbench: error: --min-time expects a finite number of seconds > 0, not 'inf' "
            "(an option for allocbench-run)")


def adapt_lines(path: Path) -> list[str]:
    return [line.split("#")[0].strip() for line in path.read_text().splitlines()
            if "# ADAPT" in line]


def code_lines(shell: str) -> list[str]:
    """The lines of a shell script without their comments (none of ours has a # in a string)."""
    return [line.split(" #")[0].strip() for line in shell.splitlines()]


def scripts(job: dict) -> str:
    return "\n".join(line for key in ("before_script", "script", "after_script")
                     for line in job.get(key, []))


# --- the templates as files ---

def test_github_gate_builds_with_a_read_only_token_and_posts_nothing_itself():
    doc = yaml.safe_load(GITHUB.read_text())
    assert doc[True] == {"pull_request": None}   # YAML 1.1 reads the key `on` as true
    assert doc["concurrency"] == {"group": "allocbench-pr-${{ github.event.pull_request.number }}",
                                  "cancel-in-progress": True}
    job = doc["jobs"]["ab"]
    assert job["container"] == "debian:12"
    steps = job["steps"]
    assert steps[0]["run"].split()[-4:] == ["git", "ca-certificates", "python3", "ccache"]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert uses[1:3] == ["actions/checkout", "actions/checkout"]
    assert steps[1]["with"] == {"fetch-depth": 0, "persist-credentials": False}
    assert steps[2]["with"]["path"] == "allocbench-tool"
    # ccache: restored before the step that exports its folder, saved after it even on failure.
    restore, save = (steps[uses.index(f"actions/cache/{what}")] for what in ("restore", "save"))
    ab = github_step(doc)
    assert uses.index("actions/cache/restore") < steps.index(ab) < uses.index("actions/cache/save")
    assert restore["with"]["path"] == save["with"]["path"] == ".ccache"
    assert 'export CCACHE_DIR="$PWD/.ccache"' in code_lines(ab["run"])
    assert save["if"] == "always()"
    assert save["with"]["key"] == f"${{{{ steps.{restore['id']}.outputs.cache-primary-key }}}}"
    results, comment = (s for s in steps if s.get("uses", "").startswith("actions/upload-"))
    assert results["if"] == "always()" and results["with"]["include-hidden-files"] is True
    (command,) = allocbench_commands(GITHUB)
    args = cli.build_parser().parse_args(command)
    assert results["with"]["path"].split() == [".allocbench/ab/", f"{args.report}/"]
    # The comparison for the comment workflow: the artifact it downloads, unless cancelled.
    commenter = yaml.safe_load(COMMENTER.read_text())["jobs"]["comment"]["steps"][0]["with"]
    assert comment["with"]["name"] == commenter["name"] == "allocbench-comment"
    assert comment["with"]["path"] == "allocbench-comment/" and \
        comment["if"] == "${{ !cancelled() }}"
    assert (args.command, args.base, args.format) == ("ab", "$base", "markdown")
    assert args.cand == "${{ github.event.pull_request.head.sha }}"   # through HEAD_SHA
    assert (args.target, args.plugin_path, args.cmake_arg, args.forks) == (
        "my_scenarios", "my_scenarios.so", ["-DBUILD_TESTING=OFF"], 3)   # the ADAPT lines
    # No token anywhere in the job that runs the pull request's code.
    assert "token" not in GITHUB.read_text().split("\nname:")[1].lower()
    assert adapt_lines(GITHUB) == [
        "repository: your-org/allocbench", "AB_TARGET: my_scenarios",
        "AB_PLUGIN_PATH: my_scenarios.so", "AB_CMAKE_ARG: -DBUILD_TESTING=OFF",
        "ALLOCBENCH_AB_OPTIONS: --forks 3"]


def test_github_comment_workflow_runs_after_the_gate_and_checks_out_nothing():
    doc = yaml.safe_load(COMMENTER.read_text())
    gate = yaml.safe_load(GITHUB.read_text())["name"]
    assert doc[True] == {"workflow_run": {"workflows": [gate], "types": ["completed"]}}
    assert doc["concurrency"]["cancel-in-progress"] is False
    job = doc["jobs"]["comment"]
    assert " ".join(job["if"].split()) == (
        "github.event.workflow_run.event == 'pull_request' && "
        "(github.event.workflow_run.conclusion == 'success' || "
        "github.event.workflow_run.conclusion == 'failure')")
    download, post = job["steps"]
    assert download["uses"] == "actions/download-artifact@v4"
    assert download["with"] == {"name": "allocbench-comment", "path": "allocbench-comment",
                                "run-id": "${{ github.event.workflow_run.id }}",
                                "github-token": "${{ github.token }}"}
    assert download["continue-on-error"] is True
    assert post["env"]["DOWNLOAD"] == f"${{{{ steps.{download['id']}.outcome }}}}"
    assert "container" not in job and "uses" not in post


def test_gitlab_build_job_holds_no_token_and_keeps_everything():
    job = gitlab_jobs()["allocbench-ab"]
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    assert job["image"] == "debian:12"
    assert job["variables"]["GIT_DEPTH"] == "0"
    assert "environment" not in job   # the token's scope: no variable of it reaches this job
    assert not [name for name in job["variables"] if "TOKEN" in name]
    assert "TOKEN" not in scripts(job)
    assert job["cache"] == {"key": "allocbench-ccache", "paths": [".ccache/"], "when": "always"}
    (script,) = job["script"]
    assert 'export CCACHE_DIR="$PWD/.ccache"' in code_lines(script)
    install = next(line for line in job["before_script"] if "apt-get install" in line).split()
    assert install[-4:] == ["git", "ca-certificates", "python3", "ccache"]
    assert job["before_script"][-1].split("#")[0].split()[-1] == "allocbench-tool"
    (command,) = allocbench_commands(GITLAB)
    args = cli.build_parser().parse_args(command)
    assert (args.base, args.cand, args.format) == ("$CI_MERGE_REQUEST_DIFF_BASE_SHA",
                                                  "$CI_COMMIT_SHA", "markdown")
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["paths"] == [".allocbench/ab/", f"{args.report}/",
                                         "allocbench-comment/"]
    text = GITLAB.read_text()
    assert "ALLOCBENCH_GITLAB_TOKEN" in text and "scope `api`" in text and "Masked" in text
    assert f"Environment scope `{SCOPE}`" in text
    assert adapt_lines(GITLAB) == [
        "AB_TARGET: my_scenarios", "AB_PLUGIN_PATH: my_scenarios.so",
        "AB_CMAKE_ARG: -DBUILD_TESTING=OFF", "ALLOCBENCH_AB_OPTIONS: --forks 3",
        "- git clone --depth 1 https://github.com/your-org/allocbench.git allocbench-tool"]


def test_gitlab_note_job_runs_nothing_of_the_merge_request():
    jobs = gitlab_jobs()
    assert set(jobs) == {"allocbench-ab", "allocbench-note"}
    job = jobs["allocbench-note"]
    assert job["environment"] == {"name": SCOPE, "action": "access"}   # no deployment
    assert job["variables"] == {"GIT_STRATEGY": "none"}
    assert job["needs"] == [{"job": "allocbench-ab", "artifacts": True}]
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"',
                             "when": "always"}]   # also after a failed allocbench-ab
    assert job["inherit"] == {"default": False}
    assert {"cache", "artifacts", "after_script", "services"}.isdisjoint(job)
    assert job["before_script"] == [
        "apt-get update",
        "apt-get install -y --no-install-recommends ca-certificates curl python3"]
    words = set(re.findall(r"[\w./-]+", scripts(job)))
    assert {"git", "cmake", "ccache", "make", "allocbench-tool/allocbench"}.isdisjoint(words)


def test_the_readme_says_what_the_templates_hold():
    """docs/gating.md's "In CI" section, its line breaks folded, against the templates."""
    readme = page("gating")
    section = " ".join(readme.split("\n## In CI: one comment per pull request\n")[1]
                       .split("\n## ")[0].split())
    gate = yaml.safe_load(GITHUB.read_text())["jobs"]["ab"]["permissions"]
    comment = yaml.safe_load(COMMENTER.read_text())["jobs"]["comment"]
    note = gitlab_jobs()["allocbench-note"]
    claims = [f"`{MARKER}`", f"at most {compare_format.COMMENT_CHARS:,} characters",
              "with " + ", ".join(f"`{k}: {v}`" for k, v in gate.items()) + " only",
              "with " + " and ".join(f"`{k}: {v}`" for k, v in comment["permissions"].items()),
              f"as `{comment['steps'][1]['env']['COMMENT_AUTHOR']}`",
              f"Environment scope `{note['environment']['name']}`",
              f"(`action: {note['environment']['action']}`",
              f"`GIT_STRATEGY: {note['variables']['GIT_STRATEGY']}`",
              "five in each gate (none in the comment workflow"]
    assert [claim for claim in claims if claim not in section] == []
    assert len(adapt_lines(GITHUB)) == len(adapt_lines(GITLAB)) == 5
    assert adapt_lines(COMMENTER) == []
    rows = re.findall(r"^\| `(\w+: [^`]+)` \|", readme.split("five in each gate")[1], re.M)
    assert rows == adapt_lines(GITHUB)[1:] == adapt_lines(GITLAB)[:4]


def test_both_templates_build_the_same_plugin():
    github = github_step(yaml.safe_load(GITHUB.read_text()))["env"]
    gitlab = gitlab_jobs()["allocbench-ab"]["variables"]
    for name in ("AB_TARGET", "AB_PLUGIN_PATH", "AB_CMAKE_ARG", "ALLOCBENCH_AB_OPTIONS"):
        assert github[name] == gitlab[name]


# --- the templates, run ---

@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict[str, str]:
    """A project building the templates' plugin; main moved on after the pull request's base."""
    repo = tmp_path_factory.mktemp("pr") / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    env = gitlab_jobs()["allocbench-ab"]["variables"]
    target = env["AB_TARGET"]
    assert env["AB_PLUGIN_PATH"] == f"{target}.so"
    cmake = (f"cmake_minimum_required(VERSION 3.20)\nproject({target} CXX)\n"
             f"find_package(allocbench REQUIRED)\nallocbench_add_plugin({target} SOURCES "
             "spans.cc)\n")
    shas = {"base": commit(repo, "base", {"CMakeLists.txt": cmake,
                                          "spans.cc": SPANS.replace("EXTRA", "")})}
    shas["main"] = commit(repo, "main moves on", {"README.md": "Spans.\n"})
    git(repo, "checkout", "-q", "-b", "pr", shas["base"])
    shas["block"] = commit(repo, "one more block", {"spans.cc": SPANS.replace("EXTRA", BLOCK)})
    shas["block+"] = commit(repo, "and a comment", {
        "spans.cc": SPANS.replace("EXTRA", f"{BLOCK} {COMMENT}")})
    git(repo, "checkout", "-q", "-b", "clean", shas["base"])
    shas["comment"] = commit(repo, "a comment", {"spans.cc": SPANS.replace("EXTRA", COMMENT)})
    git(repo, "checkout", "-q", "-b", "broken", shas["base"])
    shas["broken"] = commit(repo, "broken", {
        "spans.cc": SPANS.replace("EXTRA", "this does not compile;")})
    git(repo, "checkout", "-q", "main")
    return {"repo": str(repo), **shas}


@pytest.mark.parametrize("ci", [GitHub, GitLab], ids=["github", "gitlab"])
def test_one_comment_per_pull_request_edited_on_every_push(ci, project, runner, tmp_path):
    work = checkout(project, tmp_path)
    run = ci(work, tmp_path)
    forge = run.forge
    seeded = forge.comments(run.thread)
    fast = f"--forks 1 --no-time --no-sites --runner {runner}"
    base, merge_base = project["main"], project["base"]

    def reads_then(method: str, path: str) -> dict:
        """The posting job's calls: what it reads, then one write; the written one."""
        *reads, written = forge.new_calls()
        run.check_reads(reads)
        assert (written["method"], written["path"]) == (method, path)
        return written

    # The first push: one more block per span. One new comment, then the gate fails.
    gate, post = run.push(base, merge_base, project["block"], fast)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert run.errors(gate) == [run.gate_failed()]
    assert post.returncode == 0 and run.errors(post) == [], post.stdout + post.stderr
    posted = reads_then("POST", run.listed)
    comments = forge.comments(run.thread)
    assert comments[:3] == seeded and len(comments) == 4   # not the foreign marker's comment
    comment = comments[3]
    assert comment["id"] == 1003 and comment["body"] == posted["body"]
    assert comment.get("user", comment.get("author")) == (
        {"login": run.BOT["login"], "type": "Bot"} if ci is GitHub else
        {"id": run.BOT["id"], "username": run.BOT["username"]})
    body = comment["body"].splitlines()
    assert body[0] == MARKER and body[1].startswith("## allocbench: ")
    assert REGRESSION in body
    assert "Gate failed: 3 gated regressions (--fail-on any) in e2e/start_span (bytes_per_op, " \
        "allocs_per_op, frees_per_op)." in comment["body"]
    assert body[-1] == run.last_line(project["block"], merge_base)
    # The comment is the comparison ab wrote, between the marker and the last line.
    run_dir = work / ".allocbench" / "ab" / f"{merge_base[:12]}-{project['block'][:12]}"
    assert "\n".join(body[1:-2]) + "\n" == (run_dir / "comparison.md").read_text()
    fork = json.loads((run_dir / "cand" / "fork-1.json").read_text())
    assert fork["context"]["revision"]["sha"] == project["block"]
    assert (work / "ab-report" / "index.html").is_file()
    # Every compile of the two plugin builds went through ccache, into the folder kept.
    compiles = forge.ccache_log.read_text().splitlines()
    assert compiles == [str(work / ".ccache")] * 2   # spans.cc at the merge base and the head
    assert run.said(1003, created=True) in post.stdout.splitlines()
    if ci is GitHub:
        assert run.summary.read_text() == (run_dir / "comparison.md").read_text()
    else:   # the comparison is in the job's log
        assert REGRESSION in gate.stdout.splitlines()

    # A second push: the same comment, edited; no second one.
    gate, post = run.push(base, merge_base, project["block+"], fast)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert run.errors(gate) == [run.gate_failed()]
    assert post.returncode == 0, post.stdout + post.stderr
    edited = reads_then(run.update, run.updated(1003))
    comments = forge.comments(run.thread)
    assert comments[:3] == seeded and [c["id"] for c in comments] == [1000, 1001, 1002, 1003]
    assert comments[3]["body"] == edited["body"] != comment["body"]
    assert REGRESSION in edited["body"].splitlines()
    assert run.said(1003, created=False) in post.stdout.splitlines()
    assert edited["body"].splitlines()[-1] == run.last_line(project["block+"], merge_base)

    # A push that only changes a comment: it passes, and says so in the same comment.
    gate, post = run.push(base, merge_base, project["comment"], fast)
    assert (gate.returncode, post.returncode) == (0, 0), gate.stdout + gate.stderr
    assert run.errors(gate) == run.errors(post) == []
    passed = reads_then(run.update, run.updated(1003))
    comments = forge.comments(run.thread)
    assert comments[:3] == seeded and [c["id"] for c in comments] == [1000, 1001, 1002, 1003]
    assert comments[3]["body"] == passed["body"]
    lines = passed["body"].splitlines()
    assert lines[0] == MARKER and "✅ Gate passed" in passed["body"]
    assert not any(line.startswith("- 🟥") for line in lines)

    # Bad input: the tool's one-line message is the gate's error; nothing is posted.
    gate, post = run.push(base, merge_base, project["comment"], f"{fast} --min-time inf")
    assert gate.returncode == 2, gate.stdout + gate.stderr
    assert run.errors(gate) == [run.error(2, MIN_TIME)]
    assert (post.returncode, post.stdout.splitlines()) == (0, [run.left(2)])
    missing = "0" * 40
    gate, post = run.push(missing, missing, project["comment"], fast)
    assert gate.returncode == 2, gate.stdout + gate.stderr
    if ci is GitHub:   # the merge base is the step's to find
        assert run.errors(gate) == [
            f"::error::no merge base of {missing} and {project['comment']} here (fetch-depth: 0?)"]
    else:
        assert run.errors(gate) == [run.error(2, (
            f"allocbench: error: {work}: no commit named '{missing}'; check the name with "
            f"'git -C {work} log --oneline'"))]
    assert (post.returncode, post.stdout.splitlines()) == (0, [run.left(2)])
    # A head that does not build: exit code 3, the error line of ab's message.
    gate, post = run.push(base, merge_base, project["broken"], fast)
    assert gate.returncode == 3, gate.stdout + gate.stderr
    assert run.errors(gate) == [run.error(3, (
        f"allocbench: error: building my_scenarios at {project['broken'][:12]} failed (exit "
        "code 2):"))]
    assert "spans.cc:12:5: error:" in gate.stdout   # the build's output is in the log
    assert (post.returncode, post.stdout.splitlines()) == (0, [run.left(3)])
    assert forge.new_calls() == []
    assert forge.comments(run.thread) == comments
    assert len(forge.ccache_log.read_text().splitlines()) == 5   # one build per head, cached

    # What the pull request's code saw, at every compile: no token, in no form.
    seen = forge.seen.read_text()
    assert seen.count(f"CCACHE_DIR={work / '.ccache'}\n") == 5   # the spy did look
    assert run.TOKEN not in seen and not re.search(r"^\w*TOKEN\w*=", seen, re.M)
    if ci is GitHub:
        assert run.secret() not in seen and "extraheader" not in seen

    if ci is GitLab:   # no token in the note job: said at once, nothing called
        done = run.comment(work / "allocbench-comment", project["comment"], token=None)
        assert done.returncode == 2
        assert run.errors(done) == [
            "ERROR: no ALLOCBENCH_GITLAB_TOKEN in this job: add it as a masked CI/CD variable "
            "of environment scope allocbench-note (see the header of allocbench.yml)"]
        assert forge.new_calls() == []


def test_a_long_discussion_before_the_first_push_still_gets_one_note(project, runner, tmp_path):
    """GitLab lists notes a page at a time: the job's note, the 151st of 250, is found on the
    second page and edited (a note of someone else with the marker comes first); with 200
    notes and none of the job's, two full pages and an empty third are read, then one note is
    added."""
    work = checkout(project, tmp_path)
    run = GitLab(work, tmp_path)
    fast = f"--forks 1 --no-time --no-sites --runner {runner}"

    def seed(notes: list[dict]) -> None:
        state = run.forge.read()
        state["threads"][run.thread] = notes
        run.forge.write(state)

    talk = [{"id": 5000 + i, "body": f"comment {i}", "system": False, "author": run.BOT}
            for i in range(250)]
    talk[0] = {**talk[0], "body": f"{MARKER}\nmine now", "author": run.MALLORY}
    talk[150]["body"] = f"{MARKER}\nthe job's note"
    seed(talk)
    gate, post = run.push(project["main"], project["base"], project["block"], fast)
    assert (gate.returncode, post.returncode) == (1, 0), post.stdout + post.stderr
    *reads, written = run.forge.new_calls()
    run.check_reads(reads, pages=2)
    assert (written["method"], written["path"]) == ("PUT", run.updated(5150))
    notes = run.forge.comments(run.thread)
    assert [n["id"] for n in notes] == [n["id"] for n in talk]
    assert notes[0] == talk[0] and notes[150]["body"].startswith(f"{MARKER}\n## allocbench: ")

    seed(talk[:150] + talk[151:201])   # 200 notes, none of them the job's
    run.forge.new_calls()
    post = run.comment(work / "allocbench-comment", project["block"])   # the same artifact
    assert post.returncode == 0, post.stdout + post.stderr
    *reads, written = run.forge.new_calls()
    run.check_reads(reads, pages=3)
    assert (written["method"], written["path"]) == ("POST", run.listed)
    assert len(run.forge.comments(run.thread)) == 201




# What a failing ab printed (its stderr), its exit code, the message the gate's error gives:
# the last `allocbench: error:` line, else the last line that is not blank.
FAILURES = [
    ("allocbench: building my_scenarios\nallocbench: error: the first of two\n"
     "allocbench: error: building 100% of it failed\n  the compiler's last words\n\n", 3,
     "allocbench: error: building 100% of it failed"),
    ("a warning\nallocbench: note: no error line\n\n \n", 2, "allocbench: note: no error line"),
    ("\n", 3, ""),   # no line at all: the gate's error still says ab's exit code
]


@pytest.mark.parametrize("ci", [GitHub, GitLab], ids=["github", "gitlab"])
@pytest.mark.parametrize("printed, code, message", FAILURES, ids=["error lines", "none", "nothing"])
def test_a_failed_ab_gives_its_last_error_line_and_leaves_the_comment(ci, printed, code, message,
                                                                     tmp_path):
    """A fake ab (allocbench-tool/allocbench) that prints `printed` and exits `code`: the
    gate's one error, the exit code it hands over, nothing posted."""
    work = tmp_path / "checkout"
    work.mkdir()
    git(work, "init", "-q", "-b", "pr")
    head = commit(work, "the head", {"README.md": "a project\n"})
    (work / "printed.txt").write_text(printed)
    (work / "allocbench-tool").mkdir()
    fake = work / "allocbench-tool" / "allocbench"
    fake.write_text(f"#!/bin/sh\ncat {work / 'printed.txt'} >&2\nexit {code}\n")
    fake.chmod(0o755)
    run = ci(work, tmp_path)
    seeded = run.forge.comments(run.thread)
    gate, post = run.push(head, head, head, "")
    assert gate.returncode == code, gate.stdout + gate.stderr
    shown = message.replace("%", "%25") if ci is GitHub else message   # a workflow command's %
    assert run.errors(gate) == [run.error(code, shown)]
    assert (work / "allocbench-comment" / "exit-code").read_text() == f"{code}\n"
    assert (post.returncode, post.stdout.splitlines()) == (0, [run.left(code)])
    assert run.forge.new_calls() == [] and run.forge.comments(run.thread) == seeded
