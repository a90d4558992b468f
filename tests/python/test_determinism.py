"""Exact counts are the same on every run and under every allocator backend."""

from __future__ import annotations

import json
import re
import subprocess

from conftest import count_only

# Single-threaded instances of both plugins (the built-in one and the ground truth).
FILTER = ("^(ground_truth/(mixed|setup_and_pause|sized)|naming_schema|span_creation|trace_fanout|"
          "tag_interning/.*contexts:500)")
EXACT = ("bytes_per_op", "allocs_per_op", "frees_per_op", "first_op_bytes", "first_op_allocs")
# Across backends the steady per-op counts must agree. The cold op may not: glibc sizes a new
# thread's TLS vector by the number of TLS modules loaded, and libjemalloc brings one, so the
# first thread a scenario spawns costs 16 B more under jemalloc.
PER_OP = ("bytes_per_op", "allocs_per_op", "frees_per_op")


def test_five_runs_are_identical(runner, ground_truth, build_dir, tmp_path):
    builtin = build_dir / "lib" / "allocbench" / "allocbench_builtin.so"
    runs = []
    for i in range(5):
        alloc = count_only(runner, ground_truth, tmp_path / f"{i}.json", "--plugin",
                           str(builtin), "--filter", FILTER)
        runs.append({name: {k: a[k] for k in EXACT + ("usable_bytes_per_op",)}
                     for name, a in alloc.items()})
    assert len(runs[0]) >= 10
    for other in runs[1:]:
        assert other == runs[0]


def test_requested_bytes_do_not_depend_on_the_backend(build_dir, ground_truth, tmp_path):
    runners = sorted((build_dir / "bin").glob("allocbench-run*"))
    names = [r.name for r in runners]
    # Debian 12 has all four; the build makes allocbench-run-<name> for every one it finds,
    # and allocbench-run-profile, which hands its allocations to the next malloc (glibc here,
    # heaptrack's under heaptrack): the same counts again.
    assert names == ["allocbench-run", "allocbench-run-jemalloc", "allocbench-run-mimalloc",
                     "allocbench-run-profile", "allocbench-run-tcmalloc"]
    builtin = build_dir / "lib" / "allocbench" / "allocbench_builtin.so"
    per_backend = {}
    for runner in runners:
        out = tmp_path / f"{runner.name}.json"
        alloc = count_only(runner, ground_truth, out, "--plugin", str(builtin),
                           "--filter", FILTER)
        per_backend[runner.name] = {n: {k: a[k] for k in PER_OP} for n, a in alloc.items()}
        assert alloc["ground_truth/mixed"]["bytes_per_op"] == 206
        # What the allocator really handed out is its own business, but never less.
        for a in alloc.values():
            assert a["usable_bytes_per_op"] >= a["bytes_per_op"]
    baseline = per_backend["allocbench-run"]
    for name, counts in per_backend.items():
        assert counts == baseline, name


def test_isolation_changes_no_per_op_count_and_makes_the_cold_op_independent_of_order(
        runner, ground_truth, build_dir, tmp_path):
    """One process per instance (the default) counts what --no-isolation counts per op. The
    cold op may differ, and rightly: in one process, a lazy initialisation that an earlier
    instance did is missing from a later instance's first op; isolated, every instance's first
    op is what it is when that instance runs alone."""
    builtin = build_dir / "lib" / "allocbench" / "allocbench_builtin.so"
    modes = {}
    for mode, flags in (("isolated", ()), ("in-process", ("--no-isolation",))):
        modes[mode] = count_only(runner, ground_truth, tmp_path / f"{mode}.json", "--plugin",
                                 str(builtin), "--filter", FILTER, *flags)
    isolated, in_process = modes["isolated"], modes["in-process"]
    assert len(isolated) >= 10 and isolated.keys() == in_process.keys()
    for name in isolated:
        assert {k: isolated[name][k] for k in PER_OP} == {k: in_process[name][k] for k in PER_OP}
    cold = ("first_op_bytes", "first_op_allocs")
    moved = [n for n in isolated if any(isolated[n][k] != in_process[n][k] for k in cold)]
    # The first op on a fresh thread in a process pays a one-time lazy set-up of thread-local
    # state; in one process builder_reuse:0 pays it, so builder_reuse:1's first op hid it.
    assert moved == ["span_creation/fresh_thread_span/builder_reuse:1"]
    # The README quotes these.
    assert (isolated[moved[0]]["first_op_bytes"], in_process[moved[0]]["first_op_bytes"]) == \
        (1817, 1497)
    for name in moved:
        alone = count_only(runner, ground_truth, tmp_path / "alone.json", "--plugin",
                           str(builtin), "--filter", f"^{name}$", "--no-isolation")[name]
        assert {k: isolated[name][k] for k in cold} == {k: alone[k] for k in cold}


def _upstream(package: str) -> str:
    """A Debian package's upstream version: 2.36-9+deb12u14 → 2.36, 2.0.9+ds-2 → 2.0.9."""
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], check=True,
                             capture_output=True, text=True).stdout
    return re.split(r"[-+]", version.split(":")[-1])[0]


def test_each_backend_names_itself_and_the_version_debian_installed(build_dir, ground_truth,
                                                                    tmp_path):
    """The results' context says which allocator measured, and which release of it: what the
    library itself reports, checked against the version of the package dpkg installed."""
    expected = {
        "allocbench-run": ("glibc", _upstream("libc6")),
        "allocbench-run-jemalloc": ("jemalloc", f"{_upstream('libjemalloc2')}-0-g"),
        "allocbench-run-mimalloc": ("mimalloc", _upstream("libmimalloc2.0")),
        "allocbench-run-tcmalloc": ("tcmalloc", f"gperftools {_upstream('libtcmalloc-minimal4')}"),
    }
    for name, (allocator, version) in expected.items():
        out = tmp_path / f"{name}.json"
        count_only(build_dir / "bin" / name, ground_truth, out, "--filter", "ground_truth/sized")
        found = json.loads(out.read_text())["context"]["allocator"]
        # jemalloc's own string goes on with the commit it was built from (…-0-g54eaed1d8b…).
        assert found["name"] == allocator and (found["version"].startswith(version)
                                               if name.endswith("jemalloc") else
                                               found["version"] == version), (name, found)
