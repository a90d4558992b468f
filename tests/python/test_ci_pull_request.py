"""The pull-request CI templates, run: ci/github/pull-request.yml's comparison step and
ci/gitlab/allocbench.yml's script, their shell as written (only environment variables set from
outside, as GitHub and GitLab set them), with bash in a clone of a small project whose pull
request is pushed again and again, against fake `gh` and `curl` (fake_forge.py) that keep the
server's comments in a JSON file: the next push sees what the last one wrote.

The pushes: one more 32-byte block per span (a regression: one comment, then the job fails),
another commit on top (the same comment, edited), a head with only a comment changed (passes,
the comment edited again), then bad input (exit code 2) and a head that does not build (3):
the job fails with ab's one-line message as its error, the comment untouched. The `uses:`
steps (checkout, cache, upload) are not run: allocbench-tool, the second checkout, is a link
to this checkout, and the templates' ALLOCBENCH_AB_OPTIONS is replaced by the quickest settings
(one fork, no time pass, no site profiles, this build's allocbench-run)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from allocbench import cli
from conftest import ROOT
from test_ab import SPANS, commit, git
from test_ci_workflows import allocbench_commands

GITHUB = ROOT / "ci" / "github" / "pull-request.yml"
GITLAB = ROOT / "ci" / "gitlab" / "allocbench.yml"
MARKER = "<!-- allocbench:pull-request -->"
FORGE = Path(__file__).with_name("fake_forge.py")

# The pull request's regression: one 32-byte block more per span (the scenario's Span is 48).
BLOCK = "char* block = new char[32]; allocbench::DoNotOptimize(block); delete[] block;"
COMMENT = "// a span is started and finished in the same op"
REGRESSION = "- 🟥 `bytes_per_op` +32 B (48 → 80, +66.7%)"
MIN_TIME = ("allocbench: error: --min-time expects a finite number of seconds > 0, not 'inf' "
            "(an option for allocbench-run)")


def github_doc() -> dict:
    return yaml.safe_load(GITHUB.read_text())


def github_step(doc: dict) -> dict:
    return next(s for s in doc["jobs"]["ab"]["steps"] if s.get("id") == "ab")


def gitlab_job() -> dict:
    return yaml.safe_load(GITLAB.read_text())["allocbench-ab"]


def adapt_lines(path: Path) -> list[str]:
    return [line.split("#")[0].strip() for line in path.read_text().splitlines()
            if "# ADAPT" in line]


def code_lines(shell: str) -> list[str]:
    """The lines of a shell script without their comments (none of ours has a # in a string)."""
    return [line.split(" #")[0].strip() for line in shell.splitlines()]


# --- the templates as files ---

def test_github_template_runs_on_pull_requests_with_the_permissions_it_needs():
    doc = github_doc()
    assert doc[True] == {"pull_request": None}   # YAML 1.1 reads the key `on` as true
    assert doc["concurrency"] == {"group": "allocbench-pr-${{ github.event.pull_request.number }}",
                                  "cancel-in-progress": True}
    job = doc["jobs"]["ab"]
    assert job["container"] == "debian:12"
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert "permissions" not in doc
    steps = job["steps"]
    assert all(word in steps[0]["run"].split() for word in ("git", "python3", "ccache", "gh"))
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert uses[1:3] == ["actions/checkout", "actions/checkout"]
    assert steps[1]["with"] == {"fetch-depth": 0}
    assert steps[2]["with"]["path"] == "allocbench-tool"
    # ccache: restored before the step that exports its folder, saved after it even on failure.
    restore, save = (steps[uses.index(f"actions/cache/{what}")] for what in ("restore", "save"))
    ab = github_step(doc)
    assert uses.index("actions/cache/restore") < steps.index(ab) < uses.index("actions/cache/save")
    assert restore["with"]["path"] == save["with"]["path"] == ".ccache"
    assert 'export CCACHE_DIR="$PWD/.ccache"' in code_lines(ab["run"])
    assert save["if"] == "always()"
    assert save["with"]["key"] == f"${{{{ steps.{restore['id']}.outputs.cache-primary-key }}}}"
    upload = steps[uses.index("actions/upload-artifact")]
    assert upload["if"] == "always()" and upload["with"]["include-hidden-files"] is True
    (command,) = allocbench_commands(GITHUB)
    args = cli.build_parser().parse_args(command)
    assert upload["with"]["path"].split() == [".allocbench/ab/", f"{args.report}/"]
    assert (args.command, args.base, args.format) == ("ab", "$base", "markdown")
    assert args.cand == "${{ github.event.pull_request.head.sha }}"   # through HEAD_SHA
    assert (args.target, args.plugin_path, args.cmake_arg, args.forks) == (
        "my_scenarios", "my_scenarios.so", ["-DBUILD_TESTING=OFF"], 3)   # the ADAPT lines
    assert ab["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    assert adapt_lines(GITHUB) == [
        "repository: your-org/allocbench", "AB_TARGET: my_scenarios",
        "AB_PLUGIN_PATH: my_scenarios.so", "AB_CMAKE_ARG: -DBUILD_TESTING=OFF",
        "ALLOCBENCH_AB_OPTIONS: --forks 3"]


def test_gitlab_template_runs_in_merge_request_pipelines_and_keeps_everything():
    job = gitlab_job()
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    assert job["image"] == "debian:12"
    assert job["variables"]["GIT_DEPTH"] == "0"
    assert job["cache"] == {"key": "allocbench-ccache", "paths": [".ccache/"], "when": "always"}
    (script,) = job["script"]
    assert 'export CCACHE_DIR="$PWD/.ccache"' in code_lines(script)
    install = next(line for line in job["before_script"] if "apt-get install" in line).split()
    assert {"git", "curl", "python3", "ccache"} <= set(install)
    assert job["before_script"][-1].split("#")[0].split()[-1] == "allocbench-tool"
    (command,) = allocbench_commands(GITLAB)
    args = cli.build_parser().parse_args(command)
    assert (args.base, args.cand, args.format) == ("$CI_MERGE_REQUEST_DIFF_BASE_SHA",
                                                  "$CI_COMMIT_SHA", "markdown")
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["paths"] == [".allocbench/ab/", f"{args.report}/"]
    text = GITLAB.read_text()
    assert "ALLOCBENCH_GITLAB_TOKEN" in text and "scope `api`" in text and "Masked" in text
    assert adapt_lines(GITLAB) == [
        "AB_TARGET: my_scenarios", "AB_PLUGIN_PATH: my_scenarios.so",
        "AB_CMAKE_ARG: -DBUILD_TESTING=OFF", "ALLOCBENCH_AB_OPTIONS: --forks 3",
        "- git clone --depth 1 https://github.com/your-org/allocbench.git allocbench-tool"]


def test_both_templates_build_the_same_plugin():
    github, gitlab = github_step(github_doc())["env"], gitlab_job()["variables"]
    for name in ("AB_TARGET", "AB_PLUGIN_PATH", "AB_CMAKE_ARG", "ALLOCBENCH_AB_OPTIONS"):
        assert github[name] == gitlab[name]


# --- the templates, run ---

@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict[str, str]:
    """A project building the templates' plugin; main moved on after the pull request's base."""
    repo = tmp_path_factory.mktemp("pr") / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    env = gitlab_job()["variables"]
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


class Forge:
    """The fake server: its state file, its call log, the fake tools first on PATH."""

    def __init__(self, root: Path, threads: dict[str, list[dict]]):
        self.state, self.log = root / "forge.json", root / "forge.log"
        self.state.write_text(json.dumps({"next_id": 1003, "threads": threads}))
        self.log.write_text("")
        self.ccache_log = root / "ccache.log"
        self.bin = root / "bin"
        self.bin.mkdir()
        for tool in ("gh", "curl"):
            (self.bin / tool).write_text(f'#!/bin/sh\nexec /usr/bin/python3 {FORGE} {tool} "$@"\n')
        # ccache, for the plugin builds: which folder it would cache in, then the compiler.
        (self.bin / "ccache").write_text(
            f'#!/bin/sh\nprintf "%s\\n" "$CCACHE_DIR" >> {self.ccache_log}\nexec "$@"\n')
        for tool in self.bin.iterdir():
            tool.chmod(0o755)
        self.seen = 0

    def new_calls(self) -> list[dict]:
        """The calls since the last look."""
        calls = [json.loads(line) for line in self.log.read_text().splitlines()]
        new, self.seen = calls[self.seen:], len(calls)
        return new

    def comments(self, thread: str) -> list[dict]:
        return json.loads(self.state.read_text())["threads"][thread]

    def environment(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GITHUB_", "GH_", "CI_", "GITLAB_", "ALLOCBENCH_", "CCACHE_"))}
        return {**env, "PATH": f"{self.bin}:{env['PATH']}", "FAKE_FORGE_STATE": str(self.state),
                "FAKE_FORGE_LOG": str(self.log), **extra}


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """As `shell: bash` runs a step, and as GitLab runs a script on bash."""
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


class GitHub:
    REPOSITORY, PR, TOKEN = "acme/tinytags", "5", "ghs_fake"
    thread = f"repos/{REPOSITORY}/issues/{PR}"
    listed = f"{thread}/comments"
    update = "PATCH"

    def __init__(self, work: Path, root: Path):
        self.work = work
        self.forge = Forge(root, {
            self.thread: [
                {"id": 1001, "body": "Looks good to me.", "user": {"login": "octocat"}},
                {"id": 1002, "body": f"> {MARKER}\n> quoting the bot", "user": {"login": "x"}}],
            f"repos/{self.REPOSITORY}/issues/6": [   # another pull request's comment
                {"id": 900, "body": f"{MARKER}\nanother pull request", "user": {"login": "b"}}]})
        self.summary = root / "summary.md"
        self.step = github_step(github_doc())

    def updated(self, comment_id: int) -> str:
        return f"repos/{self.REPOSITORY}/issues/comments/{comment_id}"

    def push(self, base: str, merge_base: str, head: str, options: str
             ) -> subprocess.CompletedProcess:
        """The step of a push of `head` to a pull request into a branch at `base`."""
        context = {"github.token": self.TOKEN, "github.event.pull_request.number": self.PR,
                   "github.event.pull_request.base.sha": base,
                   "github.event.pull_request.head.sha": head}
        env = {name: re.sub(r"\$\{\{ *([\w.]+) *\}\}", lambda m: context[m[1]], str(value))
               for name, value in self.step["env"].items()}
        self.summary.write_text("")
        return bash(self.step["run"], self.work, self.forge.environment(
            **{**env, "ALLOCBENCH_AB_OPTIONS": options}, GITHUB_REPOSITORY=self.REPOSITORY,
            GITHUB_SERVER_URL="https://github.com", GITHUB_RUN_ID="77",
            GITHUB_STEP_SUMMARY=str(self.summary), FAKE_FORGE_REPOSITORY=self.REPOSITORY))

    def errors(self, done: subprocess.CompletedProcess) -> list[str]:
        return [line for line in done.stdout.splitlines() if line.startswith("::error")]

    def error(self, code: int, message: str) -> str:
        return f"::error title=allocbench ab (exit code {code})::{message}"

    def said(self, comment_id: int, created: bool) -> str:
        """The line of the log that names the comment (gh prints its address)."""
        return f"https://github.com/{self.REPOSITORY}/pull/{self.PR}#issuecomment-{comment_id}"

    def gate_failed(self) -> str:
        return self.error(1, "a gated regression or an instance that failed in the head: see "
                             "the pull-request comment")

    def check_listing(self, call: dict) -> None:
        assert call["argv"][:3] == ["api", "--paginate", self.listed]   # every page


class GitLab:
    API, PROJECT, MR, TOKEN = "https://gitlab.example.com/api/v4", "7", "3", "glpat-fake"
    thread = f"projects/{PROJECT}/merge_requests/{MR}"
    listed = f"{thread}/notes"
    update = "PUT"

    def __init__(self, work: Path, root: Path):
        self.work = work
        self.forge = Forge(root, {
            self.thread: [
                {"id": 1001, "body": "added 1 commit", "system": True},
                {"id": 1002, "body": f"> {MARKER}\n> quoting the bot", "system": False}],
            f"projects/{self.PROJECT}/merge_requests/4": [
                {"id": 900, "body": f"{MARKER}\nanother merge request", "system": False}]})
        self.job = gitlab_job()

    def updated(self, comment_id: int) -> str:
        return f"{self.listed}/{comment_id}"

    def push(self, base: str, merge_base: str, head: str, options: str, token: str = TOKEN
             ) -> subprocess.CompletedProcess:
        """The job of a merge-request pipeline of `head` (GitLab gives the merge base)."""
        env = {name: str(value) for name, value in self.job["variables"].items()}
        return bash("\n".join(self.job["script"]), self.work, self.forge.environment(
            **{**env, "ALLOCBENCH_AB_OPTIONS": options}, CI_PIPELINE_SOURCE="merge_request_event",
            CI_MERGE_REQUEST_DIFF_BASE_SHA=merge_base, CI_COMMIT_SHA=head,
            CI_API_V4_URL=self.API, CI_PROJECT_ID=self.PROJECT, CI_MERGE_REQUEST_IID=self.MR,
            CI_PROJECT_DIR=str(self.work), CI_JOB_URL="https://gitlab.example.com/acme/-/jobs/77",
            ALLOCBENCH_GITLAB_TOKEN=token, FAKE_FORGE_API=self.API, FAKE_FORGE_TOKEN=self.TOKEN))

    def errors(self, done: subprocess.CompletedProcess) -> list[str]:
        return [line for line in done.stdout.splitlines() if line.startswith("ERROR")]

    def error(self, code: int, message: str) -> str:
        return f"ERROR: allocbench ab failed with exit code {code}: {message}"

    def said(self, comment_id: int, created: bool) -> str:
        return (f"allocbench: added a note to merge request !{self.MR}" if created else
                f"allocbench: updated note {comment_id} of merge request !{self.MR}")

    def gate_failed(self) -> str:
        return ("ERROR: allocbench ab: a gated regression or an instance that failed in the "
                "candidate: see the merge request's note")

    def check_listing(self, call: dict, page: int = 1) -> None:
        # Pages of 100 notes, oldest first: the job's note, made at its first push, is on the
        # first page unless a hundred notes came before it (test_a_long_discussion_…).
        assert call["path"] == f"{self.listed}?sort=asc&per_page=100&page={page}"
        assert call["argv"][:4] == ["-sS", "--fail", "-H", f"PRIVATE-TOKEN: {self.TOKEN}"]


@pytest.mark.parametrize("ci", [GitHub, GitLab], ids=["github", "gitlab"])
def test_one_comment_per_pull_request_edited_on_every_push(ci, project, runner, tmp_path):
    work = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", project["repo"], str(work))
    (work / "allocbench-tool").symlink_to(ROOT)   # the template's second checkout
    run = ci(work, tmp_path)
    forge = run.forge
    seeded = forge.comments(run.thread)
    fast = f"--forks 1 --no-time --no-sites --runner {runner}"
    base, merge_base = project["main"], project["base"]

    def listing_then(method: str, path: str) -> dict:
        """The step's calls: the comments listed, then one written; the written one."""
        listing, written = forge.new_calls()   # exactly two
        run.check_listing(listing)
        assert (listing["method"], written["method"], written["path"]) == ("GET", method, path)
        return written

    # The first push: one more block per span. One new comment, then the job fails.
    done = run.push(base, merge_base, project["block"], fast)
    assert done.returncode == 1, done.stdout + done.stderr
    assert run.errors(done) == [run.gate_failed()]
    posted = listing_then("POST", run.listed)
    comments = forge.comments(run.thread)
    assert comments[:2] == seeded and len(comments) == 3
    comment = comments[2]
    assert comment["id"] == 1003 and comment["body"] == posted["body"]
    body = comment["body"].splitlines()
    assert body[0] == MARKER and body[1].startswith("## allocbench: ")
    assert REGRESSION in body
    assert "Gate failed: 3 gated regressions (--fail-on any) in e2e/start_span (bytes_per_op, " \
        "allocs_per_op, frees_per_op)." in comment["body"]
    assert body[-1].startswith(f"<sub>{project['block'][:12]} against the merge base "
                               f"{merge_base[:12]}; ")
    # The comment is the comparison ab wrote, between the marker and the last line.
    run_dir = work / ".allocbench" / "ab" / f"{merge_base[:12]}-{project['block'][:12]}"
    assert "\n".join(body[1:-2]) + "\n" == (run_dir / "comparison.md").read_text()
    fork = json.loads((run_dir / "cand" / "fork-1.json").read_text())
    assert fork["context"]["revision"]["sha"] == project["block"]
    assert (work / "ab-report" / "index.html").is_file()
    # Every compile of the two plugin builds went through ccache, into the folder kept.
    compiles = forge.ccache_log.read_text().splitlines()
    assert compiles == [str(work / ".ccache")] * 2   # spans.cc at the merge base and the head
    assert run.said(1003, created=True) in done.stdout.splitlines()
    if ci is GitHub:
        assert run.summary.read_text() == (run_dir / "comparison.md").read_text()
    else:   # the comparison is in the job's log
        assert REGRESSION in done.stdout.splitlines()

    # A second push: the same comment, edited; no second one.
    done = run.push(base, merge_base, project["block+"], fast)
    assert done.returncode == 1, done.stdout + done.stderr
    assert run.errors(done) == [run.gate_failed()]
    edited = listing_then(run.update, run.updated(1003))
    comments = forge.comments(run.thread)
    assert comments[:2] == seeded and [c["id"] for c in comments] == [1001, 1002, 1003]
    assert comments[2]["body"] == edited["body"] != comment["body"]
    assert REGRESSION in edited["body"].splitlines()
    assert run.said(1003, created=False) in done.stdout.splitlines()
    assert f"<sub>{project['block+'][:12]} against" in edited["body"]

    # A push that only changes a comment: it passes, and says so in the same comment.
    done = run.push(base, merge_base, project["comment"], fast)
    assert done.returncode == 0, done.stdout + done.stderr
    assert run.errors(done) == []
    passed = listing_then(run.update, run.updated(1003))
    comments = forge.comments(run.thread)
    assert [c["id"] for c in comments] == [1001, 1002, 1003]
    assert comments[2]["body"] == passed["body"]
    lines = passed["body"].splitlines()
    assert lines[0] == MARKER and "✅ Gate passed" in passed["body"]
    assert not any(line.startswith("- 🟥") for line in lines)

    # Bad input: the tool's one-line message is the job's error; nothing is posted.
    done = run.push(base, merge_base, project["comment"], f"{fast} --min-time inf")
    assert done.returncode == 2, done.stdout + done.stderr
    assert run.errors(done) == [run.error(2, MIN_TIME)]
    missing = "0" * 40
    done = run.push(missing, missing, project["comment"], fast)
    assert done.returncode == 2, done.stdout + done.stderr
    if ci is GitHub:   # the merge base is the step's to find
        assert run.errors(done) == [
            f"::error::no merge base of {missing} and {project['comment']} here (fetch-depth: 0?)"]
    else:
        assert run.errors(done) == [run.error(2, (
            f"allocbench: error: {work}: no commit named '{missing}'; check the name with "
            f"'git -C {work} log --oneline'"))]
    # A head that does not build: exit code 3, the error line of ab's message.
    done = run.push(base, merge_base, project["broken"], fast)
    assert done.returncode == 3, done.stdout + done.stderr
    assert run.errors(done) == [run.error(3, (
        f"allocbench: error: building my_scenarios at {project['broken'][:12]} failed (exit "
        "code 2):"))]
    assert "spans.cc:12:5: error:" in done.stdout   # the build's output is in the log
    assert forge.new_calls() == []
    assert forge.comments(run.thread) == comments
    assert len(forge.ccache_log.read_text().splitlines()) == 5   # one build per head, cached

    if ci is GitLab:   # no token: said at once, nothing built, nothing called
        done = run.push(base, merge_base, project["block"], fast, token="")
        assert done.returncode == 2
        assert run.errors(done) == ["ERROR: no ALLOCBENCH_GITLAB_TOKEN: add it as a masked "
                                    "CI/CD variable (see the header of allocbench.yml)"]
        assert forge.new_calls() == []


def test_a_long_discussion_before_the_first_push_still_gets_one_note(project, runner, tmp_path):
    """GitLab lists notes a page at a time: the job's note, the 151st of 250, is found on the
    second page and edited; with 200 notes and none of the job's, two full pages and an empty
    third are read, then one note is added."""
    work = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", project["repo"], str(work))
    (work / "allocbench-tool").symlink_to(ROOT)
    run = GitLab(work, tmp_path)
    fast = f"--forks 1 --no-time --no-sites --runner {runner}"

    def seed(notes: list[dict]) -> None:
        state = json.loads(run.forge.state.read_text())
        state["threads"][run.thread] = notes
        run.forge.state.write_text(json.dumps(state))

    talk = [{"id": 5000 + i, "body": f"comment {i}", "system": False} for i in range(250)]
    talk[150]["body"] = f"{MARKER}\nthe job's note"
    seed(talk)
    done = run.push(project["main"], project["base"], project["block"], fast)
    assert done.returncode == 1, done.stdout + done.stderr
    first, second, written = run.forge.new_calls()
    run.check_listing(first, page=1)
    run.check_listing(second, page=2)
    assert (written["method"], written["path"]) == ("PUT", run.updated(5150))
    notes = run.forge.comments(run.thread)
    assert [n["id"] for n in notes] == [n["id"] for n in talk]
    assert notes[150]["body"].startswith(f"{MARKER}\n## allocbench: ")

    seed(talk[:150] + talk[151:201])   # 200 notes, none of them the job's
    done = run.push(project["main"], project["base"], project["block"], fast)
    assert done.returncode == 1, done.stdout + done.stderr
    *listings, written = run.forge.new_calls()
    for page, call in enumerate(listings, 1):
        run.check_listing(call, page)
    assert len(listings) == 3 and (written["method"], written["path"]) == ("POST", run.listed)
    assert len(run.forge.comments(run.thread)) == 201
