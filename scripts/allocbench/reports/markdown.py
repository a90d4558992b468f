"""allocbench's markdown outputs (the run report, the pull-request comment, the sweep table) as
HTML for a page, rendered by cmark-gfm as GitHub renders them: the page says exactly what the
comment and the tables say, from the same writers.

Safe mode (cmark-gfm's default): raw HTML in the markdown is dropped, so the escaping of every
outside text (escape.py, proven with raw HTML let through by test_escaping.py) is not the only
guard. The comment's own <details>/<summary>/<sub> wrappers are dropped with it; what they
wrap is kept.
"""

from __future__ import annotations

import subprocess

from markupsafe import Markup

from allocbench.base import packages
from allocbench.base.errors import MeasurementFailed

CMARK = "/usr/bin/cmark-gfm"


def to_html(text: str) -> Markup:
    packages.ensure(["cmark-gfm"])
    done = subprocess.run([CMARK, "--extension", "table", "--to", "html"], input=text,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise MeasurementFailed(f"{CMARK} failed (exit code {done.returncode}): "
                                f"{done.stderr.strip()[:200]}")
    return Markup(done.stdout)   # safe mode: no raw HTML from the markdown gets through
