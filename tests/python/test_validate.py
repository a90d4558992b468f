"""validate.describe: how an error message shows a value it refuses, in a few words on one
line. Each expectation is written out by hand from JSON's spelling of the value."""

from __future__ import annotations

import pytest

from allocbench.base.validate import MISSING, describe

FORTY = "x" * 38   # json.dumps adds the two quotes: 40 characters


@pytest.mark.parametrize("value, shown", [
    (MISSING, "missing"),
    (None, "null"),
    (True, "true"),
    (False, "false"),
    (float("nan"), "NaN"),
    (float("inf"), "Infinity"),
    (float("-inf"), "-Infinity"),
    (2 ** 63, "an integer beyond the 64-bit range"),
    (-2 ** 63 - 1, "an integer beyond the 64-bit range"),
    (2 ** 63 - 1, "9223372036854775807"),
    (-2 ** 63, "-9223372036854775808"),
    (96, "96"),
    (0.5, "0.5"),
    ("96", 'a string ("96")'),
    (FORTY, f'a string ("{FORTY}")'),                  # 40 characters: whole
    (FORTY + "y", f'a string ("{"x" * 37}…)'),         # 41: its first 38, then an ellipsis
    ("new\nline", 'a string ("new\\nline")'),          # one line, whatever the text holds
    ([1], "a list"),
    ({"a": 1}, "an object"),
])
def test_a_value_is_described_in_a_few_words_on_one_line(value, shown):
    assert describe(value) == shown
