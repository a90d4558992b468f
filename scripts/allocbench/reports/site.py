"""Rendering a report's pages and writing the site atomically.

The site is written into a temporary folder beside --out and swapped into place in one step,
with the files the user added to the folder moved into it (folder.py: what allocbench wrote,
what it keeps), so an interrupted build leaves the previous site as it was, and a reader never
sees half a site.

A rebuild renders what changed. Pictures are keyed by their data (pictures.py); the pages of
older revisions, which one more revision leaves as they were but the newest of them, are keyed
by what they show (pages.older_key: their line and their revisions' record versions) and the
source of allocbench (a change of the code renders them again), and copied from the previous
site when their key is the one its marker lists. Every other page shows the newest revisions
and is rendered every time.

Pages: index.html; scenario/<name>.html per scenario instance; sweep/<history>.html per machine
and allocator, with sweep/<history>-<n>-older-<k>.html for the revisions older than its window
(window.py); run/<history>-<n>.html per run shown; compare/<n>.html per comparison. Every
asset is in the site (assets/, img/): it opens from file:// and from any static host.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from allocbench.base import packages
from allocbench.base.escape import terminal

from allocbench.reports import folder, pages, window
from allocbench.reports.inputs import History, Point, Site
from allocbench.reports.pictures import Pictures

HERE = Path(__file__).resolve().parent
ASSETS = ("style.css", "sort.js")


@dataclass(frozen=True)
class Built:
    out: Path
    pages: int
    drawn: int
    reused: int
    left: Path | None = None   # the previous site's folder, when something not ours was in it
    copied: int = 0            # pages copied from the previous site (their key unchanged)


def _shown(value: Any) -> Any:
    """What a page shows of a template's value: text with its control and invisible characters
    as escapes (escape.terminal; newlines kept, HTML folds them), so that a bidi override in a
    name is seen, not obeyed, as in every other output; markup (markdown that escape.py
    escaped, rendered) as it is."""
    return terminal(value, multiline=True) if isinstance(value, str) and \
        not isinstance(value, Markup) else value


def environment() -> Environment:
    packages.ensure(["python3-jinja2"])
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      finalize=_shown)
    env.filters["signed"] = lambda v: f"{v:+,.6g}"
    env.filters["percent"] = lambda v: "" if v is None else f"{v:+.1f}%"
    return env


def _asset(name: str) -> str:
    return (HERE / "static" / name).read_text(encoding="utf-8")


def _links(site: Site) -> pages.Links:
    names = dict.fromkeys([*(n for h in site.histories for n in h.names()), *site.sites])
    scenarios = {n: f"scenario/{pages.slug(n)}.html" for n in names}
    sweeps = [(h, f"sweep/{pages.slug(h.title)}-{i}.html") for i, h in enumerate(site.histories)]
    runs = {}
    for i, h in enumerate(site.histories):
        shown = [j for j, p in enumerate(h.points) if p.ok]
        if h.origin.startswith("store"):
            shown = shown[-1:]    # the newest; the sweep page has the others
        for j in shown:
            runs[(i, j)] = f"run/{pages.slug(h.title)}-{i}-{j}.html"
    comparisons = []
    for k, (origin, doc) in enumerate(site.comparisons):
        title = f"{doc['base']['label']} → {doc['candidate']['label']}"
        comparisons.append((title, origin, f"compare/{k}-{pages.slug(title)}.html"))
    older = {i: [f"sweep/{pages.slug(h.title)}-{i}-older-{k + 1}.html"
                 for k in range(len(window.of(h).older))] for i, h in enumerate(site.histories)}
    return pages.Links(scenarios, sweeps, runs, comparisons, older)


def build(site: Site, out: Path) -> Built:
    previous = folder.check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # Named apart from any other build's: a folder a killed build left may hold the user's files.
    temp = out.parent / f".{out.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    temp.mkdir()
    try:
        pics = Pictures(temp, previous.root if previous else None)
        keys: dict[str, str] = {}
        count, copied = _write_pages(site, temp, pics, previous, keys)
        (temp / "assets").mkdir()
        for name in ASSETS:
            shutil.copyfile(HERE / "static" / name, temp / "assets" / name)
        folder.write_marker(temp, keys)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    left = folder.replace(temp, out, previous)
    return Built(out, count, pics.drawn, pics.reused, left, copied)


_code: str | None = None


def _code_digest() -> str:
    """A hash of allocbench's source (the package's modules, templates and assets)."""
    global _code
    if _code is None:
        package = HERE.parent
        _code = hashlib.sha256(b"".join(
            p.relative_to(package).as_posix().encode() + b"\0" + p.read_bytes()
            for p in sorted(package.rglob("*"))
            if p.suffix in (".py", ".html", ".css", ".js") and p.is_file())).hexdigest()
    return _code


def _key(template: str, made_of: Any) -> str:
    return hashlib.sha256(json.dumps([_code_digest(), template, made_of],
                                     sort_keys=True).encode()).hexdigest()[:32]


def _write_pages(site: Site, root: Path, pics: Pictures, previous: folder.Previous | None,
                 keys: dict[str, str]) -> tuple[int, int]:
    """Renders the site's pages into `root`: (pages, of which copied from `previous`);
    `keys` gets the key of each page that has one."""
    env = environment()
    links = _links(site)
    written = copied = 0

    def write(path: str, template: str, context: Any, made_of: Any = None) -> None:
        """`context`: the template's, or a function that makes it; `made_of`: everything the
        page shows (its key), when a page is copied while that is unchanged."""
        nonlocal written, copied
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        written += 1
        if made_of is not None:
            keys[path] = _key(template, made_of)
            old = previous.root / path if previous else None
            if old is not None and previous.pages.get(path) == keys[path] and old.is_file() \
                    and not old.is_symlink():
                folder.reuse(old, target)
                copied += 1
                return
        depth = "../" * path.count("/")
        html = env.get_template(template).render(**(context() if callable(context) else context),
                                                 root=depth, inline_assets=None)
        target.write_text(html, encoding="utf-8")

    # A picture's address is relative to the site's root; pages one folder down prefix "../".
    write("index.html", "index.html", pages.index(site, links, pics))
    for name, path in links.scenarios.items():
        write(path, "scenario.html", pages.scenario(site, name, links, pics))
    for history, path in links.sweeps:
        write(path, "sweep.html", pages.sweep(history, links, pics))
    for i, paths in links.older.items():
        for k, path in enumerate(paths):
            history = site.histories[i]
            write(path, "sweep.html", functools.partial(pages.older, history, k, links),
                  pages.older_key(history, k, links))
    for (i, j), path in links.runs.items():
        history = site.histories[i]
        write(path, "run.html", pages.run(history.points[j], history, pics, links))
    for (_, origin, path), (_, doc) in zip(links.comparisons, site.comparisons):
        write(path, "comparison.html", pages.comparison(origin, doc, links, pics))
    return written, copied


def single_page(point: Point, history: History) -> str:
    """The one-file page of a run (`allocbench run` writes it next to the results): the same
    content as a site's run page, its stylesheet inline and its pictures as data: URIs."""
    env = environment()
    context = pages.run(point, history, Pictures(None))
    own = f"<style>{_asset('style.css')}</style><script defer>{_asset('sort.js')}</script>"
    return env.get_template("run.html").render(**context, root="", inline_assets=Markup(own))
