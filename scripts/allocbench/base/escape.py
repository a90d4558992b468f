"""One escaping function per kind of output, for every text that comes from outside the code:
scenario names, error texts and units from results files, tags and commit subjects from git,
store records merged from other machines.

A writer passes each such text through the function of its output, at the place it writes it;
its own fixed words and the numbers it formats need none. Ordinary names (letters, digits,
`/ : _ . -`) come out unchanged, so the outputs of ordinary runs look as they always did.

Made visible, as an escape (`\\x1b`, `\\u202e`), by every function here: the C0 and C1 control
characters and DEL, which move the cursor, recolour or forge a line; and the characters that are
not seen but change what is seen, each for its reason:

- U+202A-U+202E, the bidi embeddings and overrides (LRE RLE PDF LRO RLO), and U+2066-U+2069, the
  isolates (LRI RLI FSI PDI): they reorder the text around them ("Trojan Source"), so that
  `v1.0<RLO>gpj.exe` reads as another name;
- U+200E, U+200F and U+061C, the left-to-right, right-to-left and Arabic letter marks:
  invisible, and they move neutral characters (punctuation, digits) to the other side;
- U+206A-U+206F, the deprecated format controls (symmetric swapping, digit shapes): invisible;
- U+200B, U+2060 and U+FEFF, the zero-width space, word joiner and zero-width no-break space:
  no use inside a name, a label or a subject but to make two different ones look the same;
  likewise U+00AD (soft hyphen), U+180E (Mongolian vowel separator) and U+2061-U+2064 (the
  invisible mathematical operators);
- U+FFF9-U+FFFB, interlinear annotation: text the reader is not shown;
- U+E0001 and U+E0020-U+E007F, the tags: invisible ASCII that can carry a whole hidden sentence
  (an emoji subdivision flag, which is made of them, shows as its escapes);
- U+13430-U+13438, U+1BCA0-U+1BCA3 and U+1D173-U+1D17A, the hieroglyph, shorthand and musical
  format controls: invisible;
- U+2028 and U+2029, the line and paragraph separators: a line break, where `\\n` is escaped.

Kept as they are: U+200C and U+200D, the zero-width non-joiner and joiner, which correct
spelling needs (Persian, Hindi and other Indic scripts) and emoji sequences are made of, and
which move nothing; the prepended concatenation marks (U+0600-U+0605, U+06DD, U+070F,
U+0890-U+0891, U+08E2, U+110BD, U+110CD), format characters too but visible signs; and the
variation selectors, which only pick the glyph of the character before them (U+FE0F of an
emoji).
"""

from __future__ import annotations

import re

# The invisible characters of the module docstring, as a regular-expression class.
_INVISIBLE = ("\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
              "\ufeff\ufff9-\ufffb\U00013430-\U00013438\U0001bca0-\U0001bca3"
              "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")
# C0, DEL, C1 (ESC is \x1b, CSI is \x9b) and the invisible characters above.
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_CONTROL_BUT_NEWLINE = re.compile(f"[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_ONLY_INVISIBLE = re.compile(f"[{_INVISIBLE}]")
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
    code = ord(char)
    if code <= 0xff:
        return _NAMED.get(char, f"\\x{code:02x}")
    return f"\\u{code:04x}" if code <= 0xffff else f"\\U{code:08x}"


def terminal(text: str, *, multiline: bool = False) -> str:
    """Text that cannot move the cursor, recolour or clear the terminal, forge a line or
    reorder itself: every C0 and C1 control character and DEL (ESC included) becomes a visible
    escape such as `\\n`, `\\t` or `\\x1b`, every invisible character of the module docstring
    one such as `\\u202e`. `multiline` keeps newlines (a log tail) and escapes the rest, `\\r`
    too. Printable text, non-ASCII included (é, →, 🟥), is kept."""
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
    """A text cell a spreadsheet shows as text, not as a formula, and in the order it is
    written: the invisible characters of the module docstring (a bidi override, a zero-width
    space) become visible escapes as terminal() writes them, then a cell that starts with
    = + - @, a tab or a carriage return gets a leading `'`. C0 and C1 controls stay as they
    are: the csv module quotes them (a newline is a line break inside the cell) and neither
    moves nor hides text in a spreadsheet. Only for text cells; a number (a delta of -12) is
    written as it is."""
    text = _ONLY_INVISIBLE.sub(_visible, text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def plot_label(text: str) -> str:
    """Text for a matplotlib label, tick or legend entry that is drawn as it is: `$` as `\\$`
    (an even number of `$` would be parsed as mathtext, and a malformed formula raises),
    control characters as visible escapes, and a leading `_` after a space (matplotlib leaves
    labels that start with `_` out of the legend)."""
    text = terminal(text).replace("$", "\\$")
    return " " + text if text.startswith("_") else text
