"""Where the bytes come from: a heaptrack profile read into allocation sites (heaptrack), the
exact per-op sites of the difference of two profiles (per_op), profiling one instance
(profile), and the site changes behind a comparison that `ab` reports (changes).

May import: allocbench.base, allocbench.harness.
"""
