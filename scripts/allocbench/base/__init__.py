"""The base every part stands on: errors and exit codes, reading and writing allocbench's files
whole or not at all (fileio), checking a JSON document value by value (validate), the results
document of allocbench-run and its rules (results, results_check), one escaping function per
output (escape), child processes that never outlive allocbench (proc), the Debian packages
allocbench installs (packages) and bounded file names (names).

May import: nothing of allocbench (the standard library and Debian's python3-* packages only).
"""
