"""Bad input to allocbench-run: one line naming the problem, exit 2, no results file at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_runner


def assert_user_error(done, expected_fragment: str, out: Path) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("allocbench-run: error: ")
    assert expected_fragment in lines[0]
    assert not out.exists()
    assert not Path(str(out) + ".partial").exists()
    assert list(out.parent.glob("*.tmp.*")) == []


def test_unknown_flag(runner, tmp_path):
    out = tmp_path / "r.json"
    done = run_runner(runner, "--frobnicate", "--out", str(out))
    assert_user_error(done, "unknown flag '--frobnicate' (see --help)", out)


def test_missing_plugin_file(runner, tmp_path):
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(tmp_path / "gone.so"), "--out", str(out))
    assert_user_error(done, f"--plugin '{tmp_path}/gone.so': no such file", out)


def test_shared_library_that_is_not_a_plugin(runner, build_dir, tmp_path):
    out = tmp_path / "r.json"
    plugin = build_dir / "tests" / "plugins" / "not_a_plugin.so"
    done = run_runner(runner, "--plugin", str(plugin), "--out", str(out))
    assert_user_error(done, "not an allocbench plugin", out)


def test_file_that_is_not_a_shared_library(runner, tmp_path):
    out = tmp_path / "r.json"
    fake = tmp_path / "fake.so"
    fake.write_text("not an ELF file\n")
    done = run_runner(runner, "--plugin", str(fake), "--out", str(out))
    assert_user_error(done, "cannot be loaded as a shared library", out)


def test_api_version_mismatch_names_both_versions(runner, build_dir, tmp_path):
    out = tmp_path / "r.json"
    plugin = build_dir / "tests" / "plugins" / "api_mismatch.so"
    done = run_runner(runner, "--plugin", str(plugin), "--out", str(out))
    assert_user_error(done, "built against scenario API v999, but this allocbench-run speaks v1",
                      out)


@pytest.mark.parametrize("target", ["no-such-dir/r.json", "."])
def test_unwritable_out(runner, ground_truth, tmp_path, target):
    out = tmp_path / target
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter", "mixed",
                      "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"allocbench-run: error: cannot write '{out}'")
    assert len(done.stderr.strip().splitlines()) == 1
    assert list(tmp_path.rglob("*.json*")) == []


def test_filter_that_matches_nothing(runner, ground_truth, tmp_path):
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter", "^nothing$",
                      "--out", str(out))
    assert_user_error(done, "--filter '^nothing$' matches no scenario instance (see --list)", out)


def test_invalid_filter(runner, ground_truth, tmp_path):
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter", "(", "--out", str(out))
    assert_user_error(done, "--filter '(' is not a valid regular expression", out)
