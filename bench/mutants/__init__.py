"""bench/mutate.py's parts: mutants generated from the sources (python_ops, cpp_ops,
shell_ops), the area of every file (areas), which tests run each line (coverage_map), the
sample and its run (sample, runner), and the results (results)."""
