"""The mutants of the tree and the seeded sample of each module."""

from __future__ import annotations

import fnmatch
import random
from pathlib import Path

from .areas import area_of, is_source, language
from .cpp_ops import cpp_edits
from .model import Mutant, mutants_of
from .python_ops import python_edits, python_parses
from .shell_ops import shell_edits

EDITS = {"python": python_edits, "cpp": cpp_edits, "shell": shell_edits}
DEFAULT_SEED = 24


def modules(root: Path, names: list[str], wanted: list[str], areas: list[str]) -> list[str]:
    """The source files selected by --module (paths or globs) and --area."""
    chosen = [n for n in names if is_source(n)]
    if wanted:
        chosen = [n for n in chosen if any(fnmatch.fnmatchcase(n, w) for w in wanted)]
    if areas:
        chosen = [n for n in chosen if area_of(n) in areas]
    return sorted(chosen)


def all_mutants(root: Path, name: str) -> list[Mutant]:
    text = (root / name).read_text()
    return mutants_of(name, text, EDITS[language(name)](text))


def sample(root: Path, name: str, per_module: int, seed: int) -> list[Mutant]:
    """`per_module` mutants of one file, drawn with a generator seeded by (seed, file) so a
    module's sample does not depend on which other modules are sampled; a Python mutant whose
    module no longer parses is passed over. In file order."""
    candidates = all_mutants(root, name)
    random.Random(f"{seed}:{name}").shuffle(candidates)
    text = (root / name).read_text()
    chosen = []
    for mutant in candidates:
        if len(chosen) == per_module:
            break
        if language(name) != "python" or python_parses(mutant.apply(text)):
            chosen.append(mutant)
    return sorted(chosen, key=lambda m: (m.start, m.id))
