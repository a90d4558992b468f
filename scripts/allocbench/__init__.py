"""allocbench: allocation-regression benchmarking for C++ hot paths (the Python side)."""

__version__ = "0.1.0"
