"""The CI workflows in ci/ that users copy: valid YAML, and every allocbench command in them
parses with today's command line (a renamed flag breaks this test, not the users' CI)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from allocbench import cli
from conftest import ROOT

WORKFLOWS = sorted((ROOT / "ci").rglob("*.yml"))


def allocbench_commands(workflow: Path) -> list[list[str]]:
    doc = yaml.safe_load(workflow.read_text())
    commands = []
    for job in doc["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").splitlines():
                line = re.sub(r"\$\{\{ *matrix\.(\w+) *\}\}", "1", line.split("||")[0])
                line = line.split(">>")[0]
                words = shlex.split(line)
                if words and words[0].endswith("/allocbench"):
                    commands.append(words[1:])
    return commands


def test_there_is_a_sharded_sweep_workflow():
    assert ROOT / "ci" / "github" / "sweep.yml" in WORKFLOWS


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_every_allocbench_command_parses(workflow):
    commands = allocbench_commands(workflow)
    verbs = [c[0] for c in commands]
    assert {"sweep", "merge", "sweep-table"} <= set(verbs)
    parser = cli.build_parser()
    for command in commands:
        parser.parse_args(command)  # argparse exits (a failing test) on an unknown flag
