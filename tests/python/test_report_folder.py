"""The report's folder (scripts/allocbench/reports/folder.py): a rebuild keeps every entry the user put there (a
CNAME, .nojekyll, a gh-pages clone's .git, notes) byte for byte, removes only the previous
build's own files, and refuses — changing nothing — what it cannot keep.

A tree is compared as {path: (kind, permission bits, content or link target)}; the expected
files of a rebuild are those of a cold build of the same store into a new folder.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import threading
from pathlib import Path

import pytest

import report_data as rd
from allocbench import cli
from allocbench.reports import folder, inputs, pages, site

MARKER = ".allocbench-report"
EXTRA = "tracer/extra"   # an instance only the newest revision of the first store has


@pytest.fixture(autouse=True)
def umask():
    """The permission bits the tests expect: files 0644, folders 0755."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def tree(root: Path, under: str = "") -> dict[str, tuple[str, int, bytes]]:
    """Every entry under root/under (links not followed): kind, permission bits, bytes."""
    found = {}
    for path in sorted((root / under).rglob("*") if under else root.rglob("*")):
        info = path.lstat()
        rel = str(path.relative_to(root))
        if stat.S_ISLNK(info.st_mode):
            found[rel] = ("link", 0, os.readlink(path).encode())
        elif stat.S_ISDIR(info.st_mode):
            found[rel] = ("folder", stat.S_IMODE(info.st_mode), b"")
        else:
            found[rel] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return found


def first_store(root: Path) -> Path:
    """rd.history() and a newer revision with one more instance (EXTRA)."""
    newer = rd.Revision(rd.sha(6), "v1.11", "add extra", (rd.span(80, 2), rd.Instance(EXTRA, 8, 1)),
                        committed="2026-07-01T00:00:00+00:00")
    return rd.write_store(root / "first", [*rd.history(), newer])


def report(store: Path, out: Path) -> int:
    return cli.main(["report", "--store", str(store), "--out", str(out)])


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x",
           "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True, timeout=60).stdout


def add_users_files(out: Path) -> list[str]:
    """What a user adds to a published site's folder; the entries, as a rebuild must keep them."""
    (out / "CNAME").write_text("allocs.example.org\n")
    (out / ".nojekyll").write_bytes(b"")
    (out / "notes").mkdir()
    (out / "notes" / "todo.md").write_text("- check the 96 B\n")
    (out / "notes" / "run.sh").write_text("#!/bin/sh\n")
    (out / "notes" / "run.sh").chmod(0o751)
    (out / "notes" / "latest").symlink_to("../index.html")
    (out / "img" / "logo.svg").write_text("<svg/>")        # inside one of allocbench's folders
    git(out, "init", "-q", "-b", "gh-pages")
    git(out, "add", "CNAME", ".nojekyll", "notes")
    git(out, "commit", "-q", "-m", "the user's commit")
    return ["CNAME", ".nojekyll", ".git", "notes", "img/logo.svg"]


def users(snapshot: dict, entries: list[str]) -> dict:
    return {p: v for p, v in snapshot.items()
            if any(p == e or p.startswith(e + "/") for e in entries)}


def test_a_rebuild_keeps_the_users_files_and_removes_the_previous_builds_stale_pages(tmp_path):
    out = tmp_path / "site"
    assert report(first_store(tmp_path), out) == 0
    extra_page = f"scenario/{pages.slug(EXTRA)}.html"
    assert (out / extra_page).is_file()
    entries = add_users_files(out)
    before = users(tree(out), entries)
    assert before["notes/run.sh"] == ("file", 0o751, b"#!/bin/sh\n")
    assert before[".git/HEAD"] == ("file", 0o644, b"ref: refs/heads/gh-pages\n")

    second = rd.write_store(tmp_path / "second", rd.history())   # v1.11 is no longer there
    assert report(second, out) == 0
    cold = tmp_path / "cold"
    assert report(second, cold) == 0

    after = tree(out)
    assert users(after, entries) == before           # every byte, mode and link of the user's
    ours = {p: v for p, v in after.items() if p not in before}
    assert ours == tree(cold)                        # allocbench's: exactly a cold build's
    assert extra_page not in after
    listed = json.loads((out / MARKER).read_text())["files"]
    assert listed == sorted(p for p, v in tree(cold).items() if v[0] == "file" and p != MARKER)
    assert git(out, "log", "--format=%s").splitlines() == ["the user's commit"]
    assert git(out, "show", "HEAD:CNAME") == "allocs.example.org\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cold", "first", "second", "site"]


def test_what_the_user_added_is_kept_by_the_rebuild_after_too(tmp_path):
    out = tmp_path / "site"
    store = first_store(tmp_path)
    assert report(store, out) == 0
    (out / "CNAME").write_text("a.example\n")
    assert report(store, out) == 0 and report(store, out) == 0
    assert (out / "CNAME").read_text() == "a.example\n"
    assert "CNAME" not in json.loads((out / MARKER).read_text())["files"]


def test_a_users_file_where_the_new_report_writes_is_refused_and_nothing_changes(tmp_path,
                                                                                 capsys):
    out = tmp_path / "site"
    second = rd.write_store(tmp_path / "second", rd.history())
    assert report(second, out) == 0
    extra_page = f"scenario/{pages.slug(EXTRA)}.html"
    (out / extra_page).write_text("my page")
    (out / "CNAME").write_text("a.example\n")
    before = tree(out)
    capsys.readouterr()
    assert report(first_store(tmp_path), out) == 2
    assert capsys.readouterr().err == (
        f"allocbench: error: --out {out}: {extra_page} is not allocbench's (not in its "
        f"{MARKER}) and the new report writes there; move or rename it and build again (the "
        "previous report is as it was)\n")
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first", "second", "site"]


def test_a_site_whose_marker_lists_no_files_keeps_what_is_outside_its_folders(tmp_path):
    """A site written before the marker listed its files: its top-level pages and folders are
    allocbench's, everything else the user's."""
    out = tmp_path / "site"
    store = rd.write_store(tmp_path / "store", rd.history())
    for rel in ("index.html", "scenario/gone.html", "img/old.svg", "assets/style.css"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("old")
    (out / MARKER).write_text(json.dumps({"generator": "allocbench report"}) + "\n")
    (out / "CNAME").write_text("a.example\n")
    (out / "notes").mkdir()
    (out / "notes" / "n.txt").write_text("mine")
    assert report(store, out) == 0
    cold = tmp_path / "cold"
    assert report(store, cold) == 0
    after = tree(out)
    assert {p: after.pop(p) for p in ("CNAME", "notes", "notes/n.txt")} == {
        "CNAME": ("file", 0o644, b"a.example\n"), "notes": ("folder", 0o755, b""),
        "notes/n.txt": ("file", 0o644, b"mine")}
    assert after == tree(cold)


@pytest.mark.parametrize("content, message", [
    ("{", "cannot be read (Expecting property name enclosed in double quotes: line 1 column 2 "
          "(char 1)); it says which files of the folder allocbench wrote: restore it, or give a "
          "new --out folder"),
    ("[]", "not a JSON object; restore it, or give a new --out folder"),
    ('{"files": "index.html"}', "'files' is not an array of paths; restore it, or give a new "
                                "--out folder"),
    ('{"files": ["index.html", 7]}', "'files[1]' is not a path (a string) but 7; restore it, or "
                                     "give a new --out folder"),
])
def test_a_damaged_marker_is_refused_before_anything_is_built(tmp_path, capsys, content,
                                                              message):
    out = tmp_path / "site"
    out.mkdir()
    (out / MARKER).write_text(content)
    (out / "CNAME").write_text("a.example\n")
    before = tree(out)
    store = rd.write_store(tmp_path / "store", rd.history())
    assert report(store, out) == 2
    assert capsys.readouterr().err == f"allocbench: error: {out / MARKER}: {message}\n"
    assert tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["site",
                                                                                  "store"]


def test_a_folder_of_other_files_says_how_to_start_one_that_keeps_them(tmp_path, capsys):
    out = tmp_path / "site"
    out.mkdir()
    (out / "CNAME").write_text("a.example\n")
    assert report(rd.write_store(tmp_path / "store", rd.history()), out) == 2
    assert capsys.readouterr().err == (
        f"allocbench: error: --out {out}: a folder of other files, not a report allocbench "
        f"wrote (no {MARKER}); give a new or empty folder (files you add to the report's folder "
        "later, a CNAME or a .git, are kept by every rebuild)\n")
    assert (out / "CNAME").read_text() == "a.example\n" and len(list(out.iterdir())) == 1


def test_the_folder_keeps_its_permissions_and_a_new_one_gets_the_umasks(tmp_path):
    store = rd.write_store(tmp_path / "store", rd.history())
    umask = os.umask(0o027)
    try:
        assert report(store, tmp_path / "new") == 0
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o750
    out = tmp_path / "site"
    assert report(store, out) == 0
    out.chmod(0o705)
    assert report(store, out) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o705


def users_site(tmp_path: Path) -> tuple[Path, inputs.Site, dict]:
    out = tmp_path / "site"
    store = rd.write_store(tmp_path / "store", rd.history())
    assert report(store, out) == 0
    (out / "CNAME").write_text("a.example\n")
    (out / "notes").mkdir()
    (out / "notes" / "n.txt").write_text("mine")
    return out, inputs.read([], store, [], []), tree(out)


@pytest.mark.parametrize("thread", [False, True], ids=["one-thread", "another-thread"])
def test_an_interrupt_while_the_site_is_swapped_waits_until_it_is_in_place(tmp_path,
                                                                          monkeypatch, thread):
    out, found, before = users_site(tmp_path)
    swap = folder._swap

    def interrupted(new: Path, at: Path) -> None:
        os.kill(os.getpid(), signal.SIGINT)   # held until the new site is in place
        swap(new, at)
    monkeypatch.setattr(folder, "_swap", interrupted)
    # Another thread that does not block SIGINT (a library's): the kernel gives it the
    # process's signal, and Python runs the handler in the main thread all the same.
    done = threading.Event()
    other = threading.Thread(target=done.wait, args=(60,), daemon=True)
    if thread:
        other.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            site.build(found, out)
    finally:
        done.set()
    assert users(tree(out), ["CNAME", "notes"]) == users(before, ["CNAME", "notes"])
    assert (out / "index.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "store"]


def test_a_swap_that_fails_puts_everything_back(tmp_path, monkeypatch, capsys):
    out, found, before = users_site(tmp_path)

    def fails(new: Path, at: Path) -> None:
        raise OSError(18, "Invalid cross-device link", str(new))
    monkeypatch.setattr(folder, "_swap", fails)
    monkeypatch.setattr(inputs, "read", lambda *args: found)
    capsys.readouterr()
    assert report(tmp_path / "store", out) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(
        f"allocbench: error: --out {out}: the new report cannot take its place "
        f"\\({tmp_path}/\\.site\\.tmp-[0-9]+-[0-9a-f]{{8}}: Invalid cross-device link\\); the "
        "previous report is as it was\n", err), err
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "store"]


def test_a_file_added_during_the_build_is_left_with_the_old_site_and_named(tmp_path,
                                                                          monkeypatch, capsys):
    out, found, _ = users_site(tmp_path)
    sort_out = folder._sort_out

    def then_a_file_arrives(previous: folder.Previous):
        sorted_out = sort_out(previous)
        (out / "late.txt").write_text("late")   # after the folder was read
        return sorted_out
    monkeypatch.setattr(folder, "_sort_out", then_a_file_arrives)
    monkeypatch.setattr(inputs, "read", lambda *args: found)
    assert report(tmp_path / "store", out) == 0
    (left,) = [p for p in tmp_path.iterdir() if p.name not in ("site", "store")]
    assert tree(left) == {"late.txt": ("file", 0o644, b"late")}
    assert f"allocbench: {left} holds what was added to {out} during the build; move it back " \
        "into the report's folder\n" in capsys.readouterr().err
    assert (out / "CNAME").read_text() == "a.example\n"


def test_a_link_the_user_put_in_place_of_allocbenchs_file_is_theirs(tmp_path, capsys):
    out, found, _ = users_site(tmp_path)
    (out / "notes" / "my.css").write_text("body {}")
    (out / "assets" / "style.css").unlink()
    (out / "assets" / "style.css").symlink_to("../notes/my.css")
    before = tree(out)
    capsys.readouterr()
    assert report(tmp_path / "store", out) == 2
    assert f"--out {out}: assets/style.css is not allocbench's" in capsys.readouterr().err
    assert tree(out) == before


def test_a_wrong_out_is_named_before_any_input_is_read(tmp_path, capsys):
    """--out is checked first: a store of a year takes a while to read, and a wrong folder
    must not cost that (nor be hidden behind an input's error)."""
    out = tmp_path / "site"
    out.write_text("not a folder\n")
    assert cli.main(["report", str(tmp_path / "no-such-results.json"), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"allocbench: error: --out {out}: is not a folder; give a "
                                       "new folder or a report folder that allocbench wrote\n")
