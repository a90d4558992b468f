"""One module per `allocbench <verb>` (cli.py loads `allocbench.commands.<verb>` by name), each
with `setup_arguments(parser)` and `run(**options)`, and the options several of them share
(arguments.py). A command puts the parts together; what it computes belongs to a part.

May import: allocbench.base, allocbench.harness, allocbench.history, allocbench.imports,
allocbench.sites, allocbench.gate, allocbench.reports.
"""
