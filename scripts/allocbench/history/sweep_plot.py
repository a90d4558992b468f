"""The allocation curve of a sweep as a picture: one panel per exact metric, one line per
scenario, revisions in sweep order along x. A revision that failed is a gap in every line and its
label reads "✗"; time is not drawn (it is directional; the table has it).

The format follows the file name: .svg (text kept as text, so it can be searched and diffed),
.png or .pdf. Needs python3-matplotlib, installed on first use. Labels, names and column titles
go through plot_label (escape.py): a `$` in a tag or a name is drawn, not parsed as mathtext.
"""

from __future__ import annotations

import os
from pathlib import Path

from allocbench.base import packages
from allocbench.base.errors import UserError
from allocbench.base.escape import plot_label
from allocbench.history import sweep_table

FORMATS = (".svg", ".png", ".pdf")


def check_path(path: Path) -> None:
    if path.suffix.lower() not in FORMATS:
        raise UserError(f"--plot {path}: name the picture .svg, .png or .pdf (the format follows "
                        "the extension)")


def plot(columns: list[sweep_table.Column], metrics: list[str], path: Path,
         changed_only: bool = False) -> None:
    """Draws the curve into `path`, atomically."""
    check_path(path)
    packages.ensure(["python3-matplotlib"])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sweep_table.instances(columns)
    if changed_only:
        names = sweep_table.changed(columns, names, metrics)
    if not names:
        raise UserError(f"--plot {path}: no scenario to draw"
                        f"{' (none changes; drop --changed-only)' if changed_only else ''}")
    known = sweep_table.fields(columns)
    labels = [plot_label(c.label if c.ok or c.record is None else f"{c.label} ✗")
              for c in columns]
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "allocbench"}):
        figure, axes = plt.subplots(len(metrics), 1, squeeze=False, sharex=True,
                                    figsize=(max(6.0, 0.7 * len(columns) + 3),
                                             max(3.2 * len(metrics), 0.17 * len(names) + 1)))
        for axis, metric in zip(axes[:, 0], metrics):
            section = sweep_table.section_of(known, metric)   # alloc or instructions
            field = known.get((section, metric), {})
            for name, row in zip(names, sweep_table.rows(columns, names, section, metric)):
                axis.plot(range(len(columns)),
                          [float("nan") if isinstance(v, str) else v for v in row],
                          marker="o", markersize=3, label=plot_label(name))
            axis.set_ylabel(f"{plot_label(field.get('column') or metric)} (exact)")
            axis.set_ylim(bottom=0)  # counts start at zero: no exaggerated steps
            axis.grid(True, alpha=0.3)
        axes[-1, 0].set_xticks(range(len(columns)), labels, rotation=45, ha="right")
        axes[0, 0].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
        temp = path.with_name(f"{path.name}.tmp.{os.getpid()}{path.suffix}")
        try:
            figure.savefig(temp, format=path.suffix[1:].lower(), metadata={"Date": None}
                           if path.suffix.lower() == ".svg" else None)
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)
            plt.close(figure)
