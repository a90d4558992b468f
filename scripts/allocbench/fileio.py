"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Writes through a temporary file in the same folder and a rename."""
    path = Path(path)
    temp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    try:
        with open(temp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    finally:
        if temp.exists():
            temp.unlink()
