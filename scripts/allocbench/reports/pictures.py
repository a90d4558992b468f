"""Pictures keyed by the data they show: a rebuild copies a picture from the previous site when
its key is unchanged, and draws only the others.

The key is a hash of the picture's kind, its data and the source of the code that draws it
(charts.py, plots.py), so a change of either redraws. `inline` (the single-file
page that `allocbench run` writes) embeds each picture as a data: URI instead of a file.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from allocbench.reports import charts, folder, plots

FOLDER = "img"
_CODE = hashlib.sha256(b"".join(Path(m.__file__).read_bytes()
                                for m in (charts, plots))).hexdigest()


@dataclass
class Pictures:
    site: Path | None                 # the site being written (None: inline)
    previous: Path | None = None      # the site it replaces, whose pictures may be reused
    drawn: int = 0
    reused: int = 0
    names: set[str] = field(default_factory=set)

    def get(self, kind: str, draw: Callable[..., str], *args: Any, key: Any = None,
            **kwargs: Any) -> str:
        """The picture `draw(*args, **kwargs)` (SVG text) draws: its address relative to the
        site's root or, inline, its data: URI. Keyed by everything the drawing is given (or by
        `key`, when that says the same in less), so it is drawn only when no picture has the
        key."""
        data = [args, kwargs] if key is None else key
        digest = hashlib.sha256(json.dumps([_CODE, kind, data], sort_keys=True,
                                           default=repr).encode()).hexdigest()[:24]
        name = f"{FOLDER}/{kind}-{digest}.svg"
        if self.site is None:   # a page of its own (a run's): nothing counts its pictures
            svg = draw(*args, **kwargs)
            return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
        target = self.site / name
        if name in self.names:
            return name
        self.names.add(name)
        target.parent.mkdir(exist_ok=True)
        old = self.previous / name if self.previous else None
        if old is not None and old.is_file() and not old.is_symlink():
            folder.reuse(old, target)
            self.reused += 1
        else:
            target.write_text(draw(*args, **kwargs), encoding="utf-8")
            self.drawn += 1
        return name
