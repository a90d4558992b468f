"""One escaping function per kind of output, for every text that comes from outside the code:
scenario names, error texts and units from results files, tags and commit subjects from git,
store records merged from other machines.

A writer passes each such text through the function of its output, at the place it writes it;
its own fixed words and the numbers it formats need none. Ordinary names (letters, digits,
`/ : _ . -`) come out unchanged, so the outputs of ordinary runs look as they always did.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")   # C0, DEL, C1 (ESC is \x1b, CSI is \x9b)
_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

# Markdown punctuation that has a meaning wherever it stands in a line. Not here: ( ) ! " : which
# only mean something after a `]` (escaped), and . - + # = which only mean something at the start
# of a line (handled below). `_` is handled below too: between two letters or digits it can
# neither open nor close emphasis, and names like bytes_per_op stay readable in the source.
_MD_INLINE = re.compile(r"[\\`*{}\[\]<>|~&$]|(?<![^\W_])_|_(?![^\W_])")
# What opens a block at the start of a line (after any spaces): a heading, a bullet, a
# setext underline or thematic break (the marker gets a `\` before it), an ordered item ("1."
# or "1)" before a space or the end; the `.` or `)` gets the `\`).
_MD_BLOCK_START = re.compile(r"^( *)(?:(\d{1,9})(?=[.)](?: |$))|(?=[#=+-]))")


def _visible(control: re.Match[str]) -> str:
    char = control.group()
    return _NAMED.get(char, f"\\x{ord(char):02x}")


def terminal(text: str, *, multiline: bool = False) -> str:
    """Text that cannot move the cursor, recolour or clear the terminal, or forge a line: every
    C0 and C1 control character and DEL (ESC included) becomes a visible escape such as `\\n`,
    `\\t` or `\\x1b`. `multiline` keeps newlines (a log tail) and escapes the rest, `\\r` too.
    Printable text, non-ASCII included (é, →, 🟥), is kept."""
    return (_CONTROL_BUT_NEWLINE if multiline else _CONTROL).sub(_visible, text)


def md_code(text: str) -> str:
    """`text` as inline code that renders as exactly `text` (control characters as visible
    escapes) in running text and in a GFM table cell alike: inside code, < * _ are literal.

    A `|` is written between code spans as `\\|`: GFM splits table cells on `|` even inside
    code, and a `\\|` inside a code span would stay `\\|` in running text (and `\\\\|` would
    split the cell). Each span's fence is one backtick longer than the longest run of backticks
    in it, padded with a space where the content would otherwise touch the fence or lose an
    edge space. The empty text gives the empty string."""
    return "\\|".join(_code_span(part) for part in terminal(text).split("|"))


def _code_span(text: str) -> str:
    if not text:
        return ""
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    edge_spaces = text[0] == text[-1] == " " and text.strip(" ") != ""
    if text[0] == "`" or text[-1] == "`" or edge_spaces:
        text = f" {text} "
    return f"{fence}{text}{fence}"


def md_text(text: str) -> str:
    """`text` as plain markdown text that renders as exactly `text` (control characters as
    visible escapes), in a paragraph, a bullet, a table cell or a header cell: no HTML, no
    link, image, emphasis, code, strikethrough, math, entity, cell break or block. Punctuation
    that has a meaning where it stands gets a backslash; the rest stays as it is."""
    text = _MD_INLINE.sub(r"\\\g<0>", terminal(text))
    return _MD_BLOCK_START.sub(r"\1\2\\", text, count=1)


def csv_cell(text: str) -> str:
    """A text cell a spreadsheet shows as text, not as a formula: one that starts with
    = + - @, a tab or a carriage return gets a leading `'`. Only for text cells; a number
    (a delta of -12) is written as it is."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def plot_label(text: str) -> str:
    """Text for a matplotlib label, tick or legend entry that is drawn as it is: `$` as `\\$`
    (an even number of `$` would be parsed as mathtext, and a malformed formula raises),
    control characters as visible escapes, and a leading `_` after a space (matplotlib leaves
    labels that start with `_` out of the legend)."""
    text = terminal(text).replace("$", "\\$")
    return " " + text if text.startswith("_") else text
