"""Reading a heaptrack profile (the .zst that `heaptrack -o` writes, after its own interpretation)
into allocation sites: for each call stack, how many allocations and bytes.

The file is zstd-compressed text, one record per line, numbers in hexadecimal (heaptrack's
src/analyze/accumulatedtracedata.cpp reads the same):

    v <heaptrack version> <file format>      s <length> <text>   a string (index 1, 2, …)
    i <ip> <module> [<function> [<file> <line> [<function> <file> <line>]…]]
                                             an instruction pointer, symbolized (index 1, 2, …;
                                             more triples: the functions it is inlined into)
    t <ip index> <parent trace index>        a call stack, one frame deeper (index 1, 2, …; 0 is
                                             the root)
    a <size> <trace index>                   an allocation's size and stack (index 0, 1, …)
    + <allocation index>                     one allocation of it;  - … one free

Other records (time, RSS, the command line, suppressions) are not needed here. File formats
before 3 wrote strings without their length; both are read.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from allocbench.base.errors import MeasurementFailed


@dataclass(frozen=True)
class Frame:
    function: str          # "" when the module has no symbol there
    file: str              # "" without debug information
    line: int
    module: str            # the shared object or executable
    address: int

    def __str__(self) -> str:
        where = f" ({Path(self.file).name}:{self.line})" if self.file else ""
        name = self.function or f"0x{self.address:x} in {Path(self.module).name}"
        return name + where


@dataclass
class Profile:
    traces: list[tuple[int, int]] = field(default_factory=list)     # (ip index, parent)
    ips: list[list[Frame]] = field(default_factory=list)            # innermost frame first
    allocations: list[tuple[int, int]] = field(default_factory=list)  # (size, trace index)
    counts: Counter[int] = field(default_factory=Counter)           # allocation index → calls

    def stack(self, trace: int) -> list[Frame]:
        """The frames of a trace, innermost (the allocation function) first."""
        frames: list[Frame] = []
        while trace != 0:
            ip, trace = self.traces[trace - 1]
            frames += self.ips[ip - 1]
        return frames


def _ip(fields: list[str], strings: list[str]) -> list[Frame]:
    """The frames at one instruction pointer, innermost first: heaptrack writes the function
    whose code holds the address with its source line first, then each function it was
    inlined into, outwards (their lines: where the call was inlined)."""
    address, module = int(fields[0], 16), strings[int(fields[1], 16) - 1]

    def text(index: str) -> str:
        return strings[int(index, 16) - 1] if int(index, 16) else ""
    rest = fields[2:]
    if not rest:
        return [Frame("", "", 0, module, address)]
    if len(rest) % 3 == 1:   # a function without a file and line, then no inlined frames
        return [Frame(text(rest[0]), "", 0, module, address)]
    return [Frame(text(rest[k]), text(rest[k + 1]), int(rest[k + 2], 16), module, address)
            for k in range(0, len(rest) - 2, 3)]


def parse(lines: list[str]) -> Profile:
    profile = Profile()
    strings: list[str] = []
    format_version = 3
    for line in lines:
        kind, _, body = line.partition(" ")
        if kind == "+":
            profile.counts[int(body, 16)] += 1
        elif kind == "t":
            ip, parent = body.split()
            profile.traces.append((int(ip, 16), int(parent, 16)))
        elif kind == "a":
            size, trace = body.split()
            profile.allocations.append((int(size, 16), int(trace, 16)))
        elif kind == "i":
            profile.ips.append(_ip(body.split(), strings))
        elif kind == "s":
            strings.append(body.split(" ", 1)[1] if format_version >= 3 else body)
        elif kind == "v":
            parts = body.split()
            format_version = int(parts[1], 16) if len(parts) > 1 else 0
    return profile


def read(path: Path) -> Profile:
    """The profile at `path` (.zst, as heaptrack writes it)."""
    done = subprocess.run(["zstdcat", str(path)], capture_output=True, text=True,
                          errors="replace", check=False)
    if done.returncode != 0:
        raise MeasurementFailed(f"{path}: cannot read the heaptrack profile (zstdcat: "
                                f"{done.stderr.strip()[:200]})")
    return parse(done.stdout.splitlines())


def allocations(profile: Profile) -> Counter[tuple[int, int]]:
    """(size, trace) → calls, over the whole profile."""
    out: Counter[tuple[int, int]] = Counter()
    for index, calls in profile.counts.items():
        out[profile.allocations[index]] += calls
    return out
