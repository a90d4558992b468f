"""The pull-request CI templates' jobs, run as the CI would run them (for
test_ci_pull_request.py and test_ci_forged_artifacts.py): the job that builds the pull request
(ci/github/pull-request.yml's comparison step, ci/gitlab/allocbench.yml's allocbench-ab), its
artifact handed over as files, then the job that posts it (pull-request-comment.yml's step,
allocbench-note). Their shell runs as written, with bash, under only the environment the CI
would give each job: the token only where the CI would give it (GitHub: where a step's env
names ${{ github.token }}, or in .git/config if a checkout keeps its credentials; GitLab: in
the jobs of the environment that is the token's scope). `gh` and `curl` are fake_forge.py's;
the fake ccache, the plugin builds' compiler launcher and so the pull request's own code,
writes down what it can see."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from conftest import ROOT
from test_ab import git

GITHUB = ROOT / "ci" / "github" / "pull-request.yml"
COMMENTER = ROOT / "ci" / "github" / "pull-request-comment.yml"
GITLAB = ROOT / "ci" / "gitlab" / "allocbench.yml"
MARKER = "<!-- allocbench:pull-request -->"
FORGE = Path(__file__).with_name("fake_forge.py")
SCOPE = "allocbench-note"   # the Environment scope the GitLab header gives the token


def github_step(doc: dict) -> dict:
    return next(s for s in doc["jobs"]["ab"]["steps"] if s.get("id") == "ab")


def gitlab_jobs() -> dict:
    return yaml.safe_load(GITLAB.read_text())


class Forge:
    """The fake server: its state file, its call log, the fake tools first on PATH. The fake
    ccache (the plugin builds' compiler launcher, i.e. the pull request's code) writes down
    what it can see: its environment and the checkout's git configuration."""

    def __init__(self, root: Path, work: Path, state: dict):
        self.state, self.log = root / "forge.json", root / "forge.log"
        self.state.write_text(json.dumps({"next_id": 1003, **state}))
        self.log.write_text("")
        self.ccache_log, self.seen = root / "ccache.log", root / "seen-by-the-build.txt"
        self.bin = root / "bin"
        self.bin.mkdir()
        for tool in ("gh", "curl"):
            (self.bin / tool).write_text(f'#!/bin/sh\nexec /usr/bin/python3 {FORGE} {tool} "$@"\n')
        (self.bin / "ccache").write_text(
            f'#!/bin/sh\nprintf "%s\\n" "$CCACHE_DIR" >> {self.ccache_log}\n'
            f'{{ env; git -C {work} config --list; }} >> {self.seen} 2>&1\nexec "$@"\n')
        for tool in self.bin.iterdir():
            tool.chmod(0o755)
        self.seen_calls = 0

    def new_calls(self) -> list[dict]:
        """The calls since the last look."""
        calls = [json.loads(line) for line in self.log.read_text().splitlines()]
        new, self.seen_calls = calls[self.seen_calls:], len(calls)
        return new

    def read(self) -> dict:
        return json.loads(self.state.read_text())

    def write(self, state: dict) -> None:
        self.state.write_text(json.dumps(state))

    def comments(self, thread: str) -> list[dict]:
        return self.read()["threads"][thread]

    def environment(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GITHUB_", "GH_", "CI_", "GITLAB_", "ALLOCBENCH_", "CCACHE_"))}
        return {**env, "PATH": f"{self.bin}:{env['PATH']}", "FAKE_FORGE_STATE": str(self.state),
                "FAKE_FORGE_LOG": str(self.log), **extra}


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """As `shell: bash` runs a step, and as GitLab runs a script on bash."""
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def substitute(env: dict, context: dict[str, str]) -> dict[str, str]:
    """A step's env: with GitHub's ${{ … }} replaced; an expression not in `context` fails."""
    return {name: re.sub(r"\$\{\{ *([\w.]+) *\}\}", lambda m: context[m[1]], str(value))
            for name, value in env.items()}


def hand_over(artifact: Path, job: Path, links: bool) -> None:
    """The artifact of one job as the next one finds it, in a folder of its own: links kept
    as links, or replaced by what they point at."""
    shutil.rmtree(job, ignore_errors=True)
    job.mkdir()
    if links and artifact.is_symlink():
        os.symlink(os.readlink(artifact), job / "allocbench-comment")
    elif artifact.exists():
        shutil.copytree(artifact, job / "allocbench-comment", symlinks=links)


class GitHub:
    REPOSITORY, PR, BRANCH, TOKEN = "acme/tinytags", "5", "pr", "ghs_fake"
    BOT = {"login": "github-actions[bot]", "type": "Bot"}   # whom GITHUB_TOKEN writes as
    thread = f"repos/{REPOSITORY}/issues/{PR}"
    listed = f"{thread}/comments"
    update = "PATCH"
    artifact_links = False   # upload-artifact stores what a link points at, not the link

    def __init__(self, work: Path, root: Path):
        self.work, self.job = work, root / "comment-job"
        self.forge = Forge(root, work, {
            "users": {self.TOKEN: self.BOT},
            "pulls": {self.pull(n): {"number": int(n), "head": {
                "sha": None, "ref": ref, "repo": {"full_name": repo}}}
                for n, repo, ref in ((self.PR, self.REPOSITORY, self.BRANCH),
                                     ("6", self.REPOSITORY, "other"),
                                     ("8", "mallory/tinytags", "main"))},
            "threads": {self.thread: [
                {"id": 1000, "body": f"{MARKER}\nmine now", "user": {"login": "mallory"}},
                {"id": 1001, "body": "Looks good to me.", "user": {"login": "octocat"}},
                {"id": 1002, "body": f"> {MARKER}\n> quoting the bot", "user": self.BOT}],
                f"repos/{self.REPOSITORY}/issues/6": [   # another pull request's comment
                {"id": 900, "body": f"{MARKER}\nanother pull request", "user": self.BOT}]}})
        self.summary = root / "summary.md"
        self.gate = yaml.safe_load(GITHUB.read_text())["jobs"]["ab"]
        self.post = yaml.safe_load(COMMENTER.read_text())["jobs"]["comment"]["steps"][1]
        self.run_id = 76
        checkout = self.gate["steps"][1]   # actions/checkout keeps the token unless told not to
        if checkout["with"].get("persist-credentials", True) is not False:
            git(work, "config", "http.https://github.com/.extraheader",
                f"AUTHORIZATION: basic {self.secret()}")

    def secret(self) -> str:
        return base64.b64encode(f"x-access-token:{self.TOKEN}".encode()).decode()

    def pull(self, number: str) -> str:
        return f"repos/{self.REPOSITORY}/pulls/{number}"

    def updated(self, comment_id: int) -> str:
        return f"repos/{self.REPOSITORY}/issues/comments/{comment_id}"

    def push(self, base: str, merge_base: str, head: str, options: str
             ) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
        """A push of `head` to the pull request into a branch at `base`: the gate's step in a
        fresh checkout, then the comment workflow with the artifact it left."""
        self.at(self.PR, head)
        shutil.rmtree(self.work / "allocbench-comment", ignore_errors=True)
        step = github_step({"jobs": {"ab": self.gate}})
        env = substitute(step["env"], {
            "github.event.pull_request.number": self.PR,
            "github.event.pull_request.base.sha": base,
            "github.event.pull_request.head.sha": head})
        self.summary.write_text("")
        gate = bash(step["run"], self.work, self.forge.environment(
            **{**env, "ALLOCBENCH_AB_OPTIONS": options}, GITHUB_STEP_SUMMARY=str(self.summary)))
        return gate, self.comment(self.work / "allocbench-comment", head)

    def comment(self, artifact: Path, head: str, repository: str = REPOSITORY,
                branch: str = BRANCH) -> subprocess.CompletedProcess:
        """The comment workflow after a run of the gate that left `artifact` (if it exists)."""
        self.run_id += 1
        hand_over(artifact, self.job, self.artifact_links)
        env = substitute(self.post["env"], {
            "github.token": self.TOKEN,
            "steps.download.outcome": "success" if artifact.exists() else "failure",
            "github.event.workflow_run.id": str(self.run_id),
            "github.event.workflow_run.html_url": self.run_url(),
            "github.event.workflow_run.head_sha": head,
            "github.event.workflow_run.head_repository.full_name": repository,
            "github.event.workflow_run.head_branch": branch})
        return bash(self.post["run"], self.job, self.forge.environment(
            **env, GITHUB_REPOSITORY=self.REPOSITORY, FAKE_FORGE_REPOSITORY=self.REPOSITORY))

    def run_url(self) -> str:
        return f"https://github.com/{self.REPOSITORY}/actions/runs/{self.run_id}"

    def last_line(self, head: str, merge_base: str) -> str:
        return (f"<sub>{head[:12]} against the merge base {merge_base[:12]}; results and "
                f"report: the allocbench-ab artifact of {self.run_url()}</sub>")

    def errors(self, done: subprocess.CompletedProcess) -> list[str]:
        return [line for line in done.stdout.splitlines() if line.startswith("::error")]

    def error(self, code: int, message: str) -> str:
        return f"::error title=allocbench ab (exit code {code})::{message}"

    def refused(self, message: str) -> str:
        return f"::error title=allocbench comment::{message}; nothing posted"

    def left(self, code: int) -> str:
        return (f"::notice::allocbench ab exited {code} in run {self.run_id}: the comment is "
                "left as it was")

    def said(self, comment_id: int, created: bool, number: str = PR) -> str:
        """The line of the log that names the comment (gh prints its address)."""
        return f"https://github.com/{self.REPOSITORY}/pull/{number}#issuecomment-{comment_id}"

    def gate_failed(self) -> str:
        return self.error(1, "a gated regression or an instance that failed in the head: see "
                             "the pull-request comment")

    def at(self, number: str, sha: str) -> None:
        """The pull request's head is now `sha`."""
        state = self.forge.read()
        state["pulls"][self.pull(number)]["head"]["sha"] = sha
        self.forge.write(state)

    def check_reads(self, calls: list[dict]) -> None:
        """The pull request read (the number checked), then the comments, every page."""
        pull, listing = calls
        assert (pull["method"], pull["path"]) == ("GET", self.pull(self.PR))
        assert (listing["method"], listing["argv"][:3]) == ("GET", ["api", "--paginate",
                                                                   self.listed])


class GitLab:
    API, PROJECT, MR, TOKEN = "https://gitlab.example.com/api/v4", "7", "3", "glpat-fake"
    PIPELINE = "https://gitlab.example.com/acme/tinytags/-/pipelines/77"
    BOT = {"id": 77, "username": "project_7_bot_3f9a2c", "bot": True}   # the token's user
    MALLORY = {"id": 42, "username": "mallory"}
    thread = f"projects/{PROJECT}/merge_requests/{MR}"
    listed = f"{thread}/notes"
    update = "PUT"
    artifact_links = True   # the runner archives a link as a link

    def __init__(self, work: Path, root: Path):
        self.work, self.job = work, root / "note-job"
        self.forge = Forge(root, work, {
            "users": {self.TOKEN: self.BOT, "glpat-mallory": self.MALLORY},
            "threads": {self.thread: [
                {"id": 1000, "body": f"{MARKER}\nmine now", "system": False,
                 "author": self.MALLORY},
                {"id": 1001, "body": "added 1 commit", "system": True, "author": self.MALLORY},
                {"id": 1002, "body": f"> {MARKER}\n> quoting", "system": False,
                 "author": self.BOT}],
                f"projects/{self.PROJECT}/merge_requests/4": [
                {"id": 900, "body": f"{MARKER}\nanother merge request", "system": False,
                 "author": self.BOT}]}})
        jobs = gitlab_jobs()
        self.build, self.note = jobs["allocbench-ab"], jobs["allocbench-note"]
        self.merge_base = self.head = ""

    def updated(self, comment_id: int) -> str:
        return f"{self.listed}/{comment_id}"

    def environment(self, job: dict, token: str | None = TOKEN) -> dict[str, str]:
        """What GitLab gives a job of the pipeline: its variables, the CI_* ones, and the
        project's ALLOCBENCH_GITLAB_TOKEN only if the job's environment is the variable's
        scope."""
        env = {name: str(value) for name, value in job.get("variables", {}).items()}
        if job.get("environment", {}).get("name") == SCOPE and token is not None:
            env["ALLOCBENCH_GITLAB_TOKEN"] = token
        return self.forge.environment(
            **env, CI_PIPELINE_SOURCE="merge_request_event",
            CI_MERGE_REQUEST_DIFF_BASE_SHA=self.merge_base, CI_COMMIT_SHA=self.head,
            CI_API_V4_URL=self.API, CI_PROJECT_ID=self.PROJECT, CI_MERGE_REQUEST_IID=self.MR,
            CI_PROJECT_DIR=str(self.work), CI_PIPELINE_URL=self.PIPELINE,
            FAKE_FORGE_API=self.API)

    def push(self, base: str, merge_base: str, head: str, options: str
             ) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
        """A merge-request pipeline of `head` (GitLab gives the merge base): allocbench-ab in
        a fresh checkout, then allocbench-note with its artifacts."""
        self.merge_base, self.head = merge_base, head
        shutil.rmtree(self.work / "allocbench-comment", ignore_errors=True)
        env = {**self.environment(self.build), "ALLOCBENCH_AB_OPTIONS": options}
        build = bash("\n".join(self.build["script"]), self.work, env)
        return build, self.comment(self.work / "allocbench-comment", head)

    def comment(self, artifact: Path, head: str, token: str | None = TOKEN
                ) -> subprocess.CompletedProcess:
        """allocbench-note after an allocbench-ab that left `artifact` (if it exists)."""
        self.head = head
        hand_over(artifact, self.job, self.artifact_links)
        return bash("\n".join(self.note["script"]), self.job, self.environment(self.note, token))

    def last_line(self, head: str, merge_base: str) -> str:
        return (f"<sub>{head[:12]} against the merge base {merge_base[:12]}; results and "
                f"report: the artifacts of the allocbench-ab job of {self.PIPELINE}</sub>")

    def errors(self, done: subprocess.CompletedProcess) -> list[str]:
        return [line for line in done.stdout.splitlines() if line.startswith("ERROR")]

    def error(self, code: int, message: str) -> str:
        return f"ERROR: allocbench ab failed with exit code {code}: {message}"

    def refused(self, message: str) -> str:
        return f"ERROR: {message}; nothing posted"

    def left(self, code: int) -> str:
        return f"allocbench: allocbench ab exited {code}: the note is left as it was"

    def said(self, comment_id: int, created: bool) -> str:
        return (f"allocbench: added a note to merge request !{self.MR}" if created else
                f"allocbench: updated note {comment_id} of merge request !{self.MR}")

    def gate_failed(self) -> str:
        return ("ERROR: allocbench ab: a gated regression or an instance that failed in the "
                "candidate: see the merge request's note")

    def check_reads(self, calls: list[dict], pages: int = 1) -> None:
        """The token's user, then pages of 100 notes, oldest first: the job's note, made at
        its first push, is on the first page unless a hundred notes came before it
        (test_a_long_discussion_…)."""
        user, *listings = calls
        assert (user["method"], user["path"]) == ("GET", "user")
        assert len(listings) == pages
        for page, call in enumerate([user, *listings]):
            assert call["argv"][:4] == ["-sS", "--fail", "-H", f"PRIVATE-TOKEN: {self.TOKEN}"]
            if page:
                assert (call["method"], call["path"]) == (
                    "GET", f"{self.listed}?sort=asc&per_page=100&page={page}")


def checkout(project: dict, tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", project["repo"], str(work))
    (work / "allocbench-tool").symlink_to(ROOT)   # the template's second checkout
    return work

