"""The published report: a static HTML site of runs, comparisons and sweeps (`allocbench report`,
and the .html that `allocbench run` writes next to its results).

    inputs.py     what the user has (results files, ab folders, compare JSON, a sweep store)
                  read into histories, runs and comparisons; damaged records become notes
    pages.py      what each page shows, as plain data for the templates
    charts.py     the line and bar charts of every history and the sweep curve, as SVG text
                  (fast: a site of 500 revisions redraws them all in about a second)
    plots.py      the matplotlib pictures: both sides' time samples, scaling fits
    window.py     which revisions a page shows (the newest and the tags), and the older pages
    pictures.py   pictures keyed by the data they show, reused from the previous site
    stats.py      per-side statistics and distribution tests of a comparison page
    site.py       rendering (Jinja2, autoescaped) and writing the site atomically
    templates/    the pages; static/ the stylesheet and the small sorting script

Every text from outside (scenario names, labels, commit subjects, errors) reaches a page through
Jinja2's autoescaping or through cmark-gfm's safe mode from markdown that escape.py escaped.

May import: allocbench.base, allocbench.harness, allocbench.history, allocbench.sites,
allocbench.gate.
"""
