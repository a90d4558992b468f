"""The CI workflows in ci/ that users copy: valid YAML, every allocbench command in them parses
with today's command line (a renamed flag breaks this test, not the users' CI), and every
GitHub job holds the least it needs: its own permissions, no credentials left in a checkout
of code it builds, no event text pasted into a shell."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

import report_data
from ci_jobs import bash
from allocbench import cli
from allocbench.history import store_index
from conftest import ROOT

WORKFLOWS = sorted((ROOT / "ci").rglob("*.yml"))


def shell_steps(doc: dict) -> list[tuple[str, dict]]:
    """(shell text, environment) of every step: GitHub Actions' `run:` steps, with the job's
    and step's `env:`; GitLab CI's jobs (every top-level mapping with a `script:`, there is no
    `jobs:` key) and their before_script, script and after_script, with the `variables:`."""
    if "jobs" in doc:
        return [(step["run"], {**doc.get("env", {}), **job.get("env", {}), **step.get("env", {})})
                for job in doc["jobs"].values() for step in job.get("steps", []) if "run" in step]
    steps = []
    for job in doc.values():
        if isinstance(job, dict) and "script" in job:
            env = {**doc.get("variables", {}), **job.get("variables", {})}
            for key in ("before_script", "script", "after_script"):
                entries = job.get(key, [])
                steps += [(entry, env) for entry in
                          ([entries] if isinstance(entries, str) else entries)]
    return steps


def expand(words: list[str], env: dict) -> list[str]:
    """The step's own variables in the words: $X_OPTIONS alone is split into its words."""
    out = []
    for word in words:
        alone = re.fullmatch(r"\$\{?(\w+)\}?", word)
        if alone and alone[1].endswith("_OPTIONS") and alone[1] in env:
            out += shlex.split(str(env[alone[1]]))
        else:
            out.append(re.sub(r"\$\{?(\w+)\}?",
                              lambda m: str(env.get(m[1], m[0])), word))
    return out


def allocbench_commands(workflow: Path) -> list[list[str]]:
    doc = yaml.safe_load(workflow.read_text())
    commands = []
    for text, env in shell_steps(doc):
        for line in text.replace("\\\n", " ").splitlines():
            if not line.split() or not line.split()[0].endswith("/allocbench"):
                continue
            line = re.sub(r"\$\{\{ *matrix\.(\w+) *\}\}", "1", line.split("||")[0])
            words = shlex.split(line.split(">>")[0])
            # The command ends where a redirection or a pipe starts.
            end = next((i for i, w in enumerate(words) if re.match(r"\d*[<>|&;]", w)),
                       len(words))
            commands.append(expand(words[1:end], env))
    return commands


def test_there_is_a_sharded_sweep_workflow():
    assert ROOT / "ci" / "github" / "sweep.yml" in WORKFLOWS


def test_the_pull_request_templates_are_checked():
    assert {ROOT / "ci" / "github" / "pull-request.yml",
            ROOT / "ci" / "github" / "pull-request-comment.yml",
            ROOT / "ci" / "gitlab" / "allocbench.yml"} <= set(WORKFLOWS)


# What each workflow runs: the comment workflow runs no allocbench (it checks out nothing).
VERBS = {"sweep.yml": {"sweep", "merge", "sweep-table"}, "publish.yml": {"sweep", "report"},
         "pull-request.yml": {"ab"}, "pull-request-comment.yml": set(), "allocbench.yml": {"ab"}}


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_every_allocbench_command_parses(workflow):
    commands = allocbench_commands(workflow)
    assert {c[0] for c in commands} == VERBS[workflow.name]
    parser = cli.build_parser()
    for command in commands:
        parser.parse_args(command)  # argparse exits (a failing test) on an unknown flag


# --- least privilege, for every GitHub job ---

GITHUB_WORKFLOWS = [w for w in WORKFLOWS if w.parent.name == "github"]
# Each job's own permissions, all it gets (a top-level block would reach every job).
PERMISSIONS = {
    "publish.yml": {"publish": {"contents": "write"},
                    "deploy": {"pages": "write", "id-token": "write"}},
    "pull-request.yml": {"ab": {"contents": "read"}},
    "pull-request-comment.yml": {"comment": {"pull-requests": "write", "actions": "read"}},
    "sweep.yml": {"sweep": {"contents": "read"}, "table": {"contents": "read"}},
}
# The one checkout that keeps its credentials (workflow, job, n-th checkout): publish's own,
# whose store step pushes with them; it builds only what reached the default branch.
KEEPS_CREDENTIALS = {("publish.yml", "publish", 0)}


@pytest.mark.parametrize("workflow", GITHUB_WORKFLOWS, ids=lambda p: p.name)
def test_every_github_job_states_the_least_it_needs(workflow):
    doc = yaml.safe_load(workflow.read_text())
    assert "permissions" not in doc
    assert {name: job["permissions"] for name, job in doc["jobs"].items()} == \
        PERMISSIONS[workflow.name]
    for name, job in doc["jobs"].items():
        checkouts = [s for s in job.get("steps", [])
                     if s.get("uses", "").startswith("actions/checkout@")]
        assert [s["with"]["persist-credentials"] for s in checkouts] == [
            (workflow.name, name, i) in KEEPS_CREDENTIALS for i in range(len(checkouts))]


@pytest.mark.parametrize("workflow", GITHUB_WORKFLOWS, ids=lambda p: p.name)
def test_no_event_text_is_pasted_into_a_shell(workflow):
    """A `run:` gets the event's values (a branch name, a title: anyone's text) through `env:`;
    pasted into the script as ${{ … }} they would be run. The matrix is the workflow's own."""
    doc = yaml.safe_load(workflow.read_text())
    for text, _ in shell_steps(doc):
        assert {e.strip() for e in re.findall(r"\$\{\{(.*?)\}\}", text)} <= {"matrix.shard"}


# --- publish.yml: measure every push, keep the store on a branch, deploy the site to Pages ---

PUBLISH = ROOT / "ci" / "github" / "publish.yml"


def publish_workflow() -> dict:
    return yaml.safe_load(PUBLISH.read_text())


def step(job: dict, name: str) -> dict:
    return next(s for s in job["steps"] if s.get("name") == name)


def test_publish_runs_on_every_push_to_the_default_branch_one_run_at_a_time():
    doc = publish_workflow()
    triggers = doc[True]   # YAML 1.1 reads the key `on` as true
    assert triggers["push"] == {"branches": ["main"]}
    assert "# ADAPT" in PUBLISH.read_text().split("branches: [main]")[1].splitlines()[0]
    # One group for every run, queued, not cancelled: two pushes never race on the store branch.
    assert doc["concurrency"] == {"group": "allocbench-store", "cancel-in-progress": False}
    assert "permissions" not in doc   # each job asks for what it needs, no more


def test_publish_measures_the_pushed_commit_into_the_stores_branch_and_builds_the_site():
    job = publish_workflow()["jobs"]["publish"]
    assert job["container"] == "debian:12" and job["permissions"] == {"contents": "write"}
    assert any(s.get("with", {}).get("path") == "allocbench-tool" for s in job["steps"])
    commands = {c[0]: cli.build_parser().parse_args(c)
                for c in allocbench_commands(PUBLISH)}
    sweep, report = commands["sweep"], commands["report"]
    assert sweep.names == ["$GITHUB_SHA"] and sweep.bench == Path("bench")
    assert sweep.machine   # one machine id for every run: one history
    assert report.store == sweep.store == Path("store/results")   # the branch's worktree
    assert report.out is not None
    upload = next(s for s in job["steps"]
                  if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert Path(upload["with"]["path"]) == report.out
    # The store is checked out before the sweep and kept before the site is built.
    names = [s.get("name") for s in job["steps"]]
    assert names.index("Check out the store") < names.index("Measure this commit") < \
        names.index("Keep the store") < names.index("Build the site")
    # The index and the last site come from the actions cache (derived data: losing it costs a
    # cold build), restored before the sweep reads the store and saved after the site is built.
    cached = {str(report.store / store_index.NAME), str(report.out)}
    restore = next(s for s in job["steps"] if s.get("uses", "").startswith(
        "actions/cache/restore@"))
    save = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache/save@"))
    assert set(restore["with"]["path"].split()) == set(save["with"]["path"].split()) == cached
    assert save["with"]["key"] == f"${{{{ steps.{restore['id']}.outputs.cache-primary-key }}}}"
    steps = job["steps"]
    assert steps.index(restore) < names.index("Measure this commit") and \
        names.index("Build the site") < steps.index(save)


def test_publish_deploys_with_the_pages_permissions_in_the_github_pages_environment():
    jobs = publish_workflow()["jobs"]
    deploy = jobs["deploy"]
    assert deploy["needs"] == "publish"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    step_id = deploy["steps"][-1]["id"]
    assert deploy["steps"][-1]["uses"].startswith("actions/deploy-pages@")
    assert deploy["environment"]["url"] == f"${{{{ steps.{step_id}.outputs.page_url }}}}"
    assert "pages" not in jobs["publish"]["permissions"]   # the build runs the project's code


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


class Run:
    """One run of publish.yml's job in a fresh clone of `origin`: its store steps' shell as
    written, under the step's environment (bash -eo pipefail, as Actions runs `shell: bash`)."""

    def __init__(self, origin: Path, work: Path, sha: str):
        self.job = publish_workflow()["jobs"]["publish"]
        git("clone", "-q", str(origin), str(work), cwd=origin.parent)
        (work / "allocbench-tool").symlink_to(ROOT)   # the workflow's second checkout
        self.work, self.env = work, {**os.environ, **self.job["env"], "GITHUB_SHA": sha}

    def step(self, name: str) -> subprocess.CompletedProcess:
        found = step(self.job, name)
        assert self.job["defaults"]["run"]["shell"] == "bash"
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               found["run"]], cwd=self.work, capture_output=True, text=True,
                              env={**self.env, **found.get("env", {})})
        assert done.returncode == 0, f"{name}:\n{done.stdout}\n{done.stderr}"
        return done

    def measure(self, revision) -> None:
        """What the sweep step does, without a build: the revision's record of each allocator."""
        report_data.write_store(self.work / "store" / "results", [revision],
                                machine="github-ubuntu-latest", allocators=("system", "jemalloc"))


def branch_files(origin: Path, branch: str) -> list[str]:
    return git("ls-tree", "-r", "--name-only", branch, cwd=origin).split()


def test_publish_store_steps_create_the_branch_then_add_to_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))   # no user's git configuration
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", "-b", "main", cwd=project)
    (project / "README.md").write_text("the measured project\n")
    git("add", "-A", cwd=project)
    git("commit", "-qm", "first", cwd=project)
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(project), str(origin), cwd=tmp_path)
    branch = publish_workflow()["jobs"]["publish"]["env"]["STORE_BRANCH"]
    revisions = report_data.history()

    # The first run: no store branch yet, so an orphan one, created with the first records.
    first = Run(origin, tmp_path / "run-1", revisions[0].sha)
    first.step("Check out the store")
    assert sorted(p.name for p in (first.work / "store").iterdir()) == [".git"]
    first.measure(revisions[0])
    first.step("Keep the store")
    files = branch_files(origin, branch)
    assert files == sorted(f"results/github-ubuntu-latest/{a}/{revisions[0].sha}/"
                           "0123456789abcdef.json" for a in ("jemalloc", "system"))
    assert git("rev-list", "--count", branch, cwd=origin).strip() == "1"
    merge_base = subprocess.run(["git", "merge-base", "main", branch], cwd=origin)
    assert merge_base.returncode == 1   # no history in common with the project's
    assert git("rev-list", "--count", "main", cwd=origin).strip() == "1"   # main untouched

    # The second run (a fresh clone, as every run is): the stored records, plus its own.
    second = Run(origin, tmp_path / "run-2", revisions[1].sha)
    second.step("Check out the store")
    assert sorted(str(p.relative_to(second.work / "store")) for p in
                  (second.work / "store").rglob("*.json")) == files
    second.measure(revisions[1])
    second.step("Keep the store")
    assert len(branch_files(origin, branch)) == 4
    assert git("rev-list", "--count", branch, cwd=origin).strip() == "2"
    assert git("log", "-1", "--format=%an %s", branch, cwd=origin).strip() == \
        f"allocbench allocbench: records of {revisions[1].sha}"
    # The site step builds from what the branch holds: both revisions of both allocators.
    second.step("Build the site")
    site = second.work / "site"
    assert (site / "index.html").is_file()
    assert len(list((site / "sweep").glob("*.html"))) == 2

    # A run of a commit already stored pushes nothing.
    again = Run(origin, tmp_path / "run-3", revisions[1].sha)
    again.step("Check out the store")
    assert "nothing new" in again.step("Keep the store").stdout
    assert git("rev-list", "--count", branch, cwd=origin).strip() == "2"

    # A run whose push is refused because the branch moved meanwhile: it retries on top.
    late = Run(origin, tmp_path / "run-4", revisions[2].sha)
    late.step("Check out the store")
    other = Run(origin, tmp_path / "run-5", revisions[3].sha)
    other.step("Check out the store")
    other.measure(revisions[3])
    other.step("Keep the store")
    late.measure(revisions[2])
    assert "[rejected]" in late.step("Keep the store").stderr   # then fetched, rebased, pushed
    assert len(branch_files(origin, branch)) == 8
    assert git("rev-list", "--count", branch, cwd=origin).strip() == "4"


# --- the templates' shell, run against fake tools ---

def fake_tool(folder: Path, name: str, script: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f"#!/bin/sh\n{script}")
    (folder / name).chmod(0o755)


def package_scripts(workflow: Path) -> dict[str, str]:
    """Each job's shell lines that mention apt-get: a GitHub job's steps, a GitLab job's
    script lines, run one after the other."""
    doc = yaml.safe_load(workflow.read_text())
    if "jobs" in doc:
        found = {name: [s["run"] for s in job["steps"] if "apt-get" in s.get("run", "")]
                 for name, job in doc["jobs"].items()}
    else:
        found = {name: [line for key in ("before_script", "script", "after_script")
                        for line in job.get(key, []) if "apt-get" in line]
                 for name, job in doc.items() if isinstance(job, dict) and "script" in job}
    return {name: "\n".join(lines) for name, lines in found.items() if lines}


# What each job installs (debian:12 has none of it), and nothing else mentions apt-get.
PACKAGES = {
    ("publish.yml", "publish"): "git ca-certificates python3",
    ("pull-request.yml", "ab"): "git ca-certificates python3 ccache",
    ("sweep.yml", "sweep"): "git ca-certificates python3",
    ("sweep.yml", "table"): "git ca-certificates python3",
    ("allocbench.yml", "allocbench-ab"): "git ca-certificates python3 ccache",
    ("allocbench.yml", "allocbench-note"): "ca-certificates curl python3",
}


def test_every_job_installs_its_packages_only_after_a_successful_apt_get_update(tmp_path):
    """A failed update (apt-get's exit code 100: no package lists) fails the step before any
    install; after a good one, the job's packages are installed, once."""
    found = {(w.name, job): script for w in WORKFLOWS
             for job, script in package_scripts(w).items()}
    assert sorted(found) == sorted(PACKAGES)
    fake_tool(tmp_path / "bin", "apt-get", 'printf "%s\\n" "$*" >> "$APT_LOG"\n'
                                           '[ "$1" != update ] || exit "$APT_UPDATE_EXIT"\n')
    log = tmp_path / "apt.log"
    for (workflow, job), script in found.items():
        install = f"install -y --no-install-recommends {PACKAGES[workflow, job]}"
        for update, code, calls in (("0", 0, ["update", install]), ("100", 100, ["update"])):
            log.write_text("")
            done = bash(script, tmp_path, {
                **os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
                "APT_LOG": str(log), "APT_UPDATE_EXIT": update})
            assert (done.returncode, log.read_text().splitlines()) == (code, calls), \
                f"{workflow} {job}: {script}\n{done.stderr}"


# The steps that are one allocbench sweep or report. Its exit code 1 is recorded, not an error:
# a sweep with a revision that did not build or an instance that failed (a gap), a site with an
# unreadable record. 0 passes too; 2 (bad input) and 3 (a failed run) fail the step (with
# test's exit code 1).
ONE_IS_RECORDED = [("publish.yml", "Measure this commit"), ("publish.yml", "Build the site"),
                   ("sweep.yml", "Sweep shard ${{ matrix.shard }} of 3")]


def test_exit_code_1_of_a_sweep_or_report_step_passes_2_and_3_fail_it(tmp_path):
    steps = [(w.name, s.get("name"), s["run"]) for w in GITHUB_WORKFLOWS
             for job in yaml.safe_load(w.read_text())["jobs"].values()
             for s in job["steps"]
             if re.match(r"allocbench-tool/allocbench (sweep|report) ", s.get("run", ""))]
    assert [(w, name) for w, name, _ in steps] == ONE_IS_RECORDED
    fake_tool(tmp_path / "allocbench-tool", "allocbench",
              'printf "%s\\n" "$@" > "$AB_ARGS"\nexit "$AB_EXIT"\n')
    args = tmp_path / "args"
    for workflow, name, text in steps:
        text = text.replace("${{ matrix.shard }}", "1")
        called = expand(shlex.split(text.split("||")[0])[1:], {"GITHUB_SHA": "0" * 40})
        for ab, step in ((0, 0), (1, 0), (2, 1), (3, 1)):
            args.write_text("")
            done = bash(text, tmp_path, {**os.environ, "AB_ARGS": str(args),
                                         "AB_EXIT": str(ab), "GITHUB_SHA": "0" * 40})
            assert (done.returncode, args.read_text().splitlines()) == (step, called), \
                f"{workflow} {name!r}, allocbench exit code {ab}: {done.stderr}"
