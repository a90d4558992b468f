"""The verdict: allocbench.toml's settings and budgets (config), the policy a pull request is
judged by, read at its base revision (policy), comparing two sets of results — exact gating of
allocation metrics, interval gating of time (compare, with its statistics in stats and the
tolerance of imported harnesses in tolerance) — per-site budgets (site_budget), and a
Comparison printed for the console and the pull request (compare_format) or as JSON and back
(compare_json).

May import: allocbench.base, allocbench.harness, allocbench.history, allocbench.imports,
allocbench.sites.
"""
