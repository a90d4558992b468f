"""The Python side of the C++ harness (harness/ in the checkout): where this checkout's build and
allocbench-run are and building them (project), which runner a command runs and with which
options (runners), the instructions pass's flags (instructions_pass), what an allocbench-run that
died left behind (runner_exit), and what one run shows: the markdown report of a results file
(run_report) and how a metric grows with an argument (scaling).

May import: allocbench.base.
"""
