"""Measuring a repository's history: one revision's identity (revision), which revisions a sweep
or bisect covers (selection), their git worktrees, builds of steps and interleaved runs
(worktrees), submodules and grafted scenarios, how a revision's plugin is built (buildspec,
buildconfig: allocbench.toml's [build]), the results store and the one line of a log that says
why a build failed, the sweep itself with its progress, table and plot, and bisect's search
(bisection).

May import: allocbench.base, allocbench.harness.
"""
