"""The matplotlib pictures of a report: both sides' time samples of a comparison and a
scenario's metric against its numeric argument with the fitted line. Few per site and rarely
changing, so they are worth matplotlib's ~150 ms each; the many history charts and the sweep
curve (redrawn on every push) are charts.py's.

SVG with text kept as text and a fixed hash salt: the same data gives the same bytes.
Labels and names go through plot_label (escape.py): a `$` is drawn, not parsed as mathtext.
"""

from __future__ import annotations

import io

from allocbench.base import packages
from allocbench.base.escape import plot_label
from allocbench.harness import scaling

RC = {"svg.fonttype": "none", "svg.hashsalt": "allocbench", "font.size": 9}


def _pyplot():
    packages.ensure(["python3-matplotlib"])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _svg(figure) -> str:
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def samples(title: str, unit: str, sides: list[tuple[str, list[list[float]]]]) -> str:
    """Each side's samples in the order measured (one colour per side, a break between forks)
    and their histograms side by side: drift shows as a slope, bimodality as two bands."""
    plt = _pyplot()
    with plt.rc_context(RC):
        figure, (seq, hist) = plt.subplots(1, 2, figsize=(8.5, 2.8),
                                           gridspec_kw={"width_ratios": [3, 1]}, sharey=True)
        try:
            for k, (name, forks) in enumerate(sides):
                color = ("#1f77b4", "#d62728")[k % 2]
                start = 0
                for j, fork in enumerate(forks):
                    xs = range(start, start + len(fork))
                    seq.plot(xs, fork, marker="o", markersize=3, linewidth=0.8, color=color,
                             label=plot_label(name) if j == 0 else None)
                    start += len(fork)
                flat = [v for fork in forks for v in fork]
                hist.hist(flat, bins=min(20, max(5, len(flat) // 2)), orientation="horizontal",
                          color=color, alpha=0.45)
            seq.set_xlabel("sample, in the order measured (forks one after another)")
            seq.set_ylabel(plot_label(unit))
            seq.set_title(plot_label(title), loc="left")
            seq.legend(fontsize="small")
            seq.grid(True, alpha=0.3)
            hist.set_xlabel("samples")
            figure.tight_layout()
            return _svg(figure)
        finally:
            plt.close(figure)


def fit(f: scaling.Fit, unit: str) -> str:
    """The metric against the argument, the points and the least-squares line."""
    plt = _pyplot()
    xs = [x for x, _ in f.points]
    with plt.rc_context(RC):
        figure, axis = plt.subplots(figsize=(5.5, 3.0))
        try:
            axis.plot(xs, [float(y) for _, y in f.points], "o", label="measured")
            ends = [min(xs), max(xs)]
            axis.plot(ends, [float(f.intercept + f.slope * x) for x in ends], "-", alpha=0.7,
                      label=f"{float(f.slope):,.4g} {plot_label(unit)} per "
                            f"{plot_label(f.argument)} + {float(f.intercept):,.4g}")
            axis.set_xlabel(plot_label(f.argument))
            axis.set_ylabel(f"{plot_label(f.metric)} ({plot_label(unit)})")
            axis.set_title(plot_label(f.label), loc="left")
            axis.set_ylim(bottom=0)
            axis.legend(fontsize="small")
            axis.grid(True, alpha=0.3)
            figure.tight_layout()
            return _svg(figure)
        finally:
            plt.close(figure)
