"""C++ mutants, on tokens: comments, string and character literals (raw strings too) and
preprocessor lines are skipped; template angle brackets, `->`, `<<`, `>>` and `operator<`
are never flipped. A mutant that does not compile is counted as such by the run, not killed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Edit

TOKEN = re.compile(r"""
    (?P<skip> //[^\n]* | /\*.*?\*/ )
  | (?P<raw> (?:u8|u|U|L)?R"(?P<delim>[^()\\\s]{0,16})\(.*?\)(?P=delim)" )
  | (?P<string> (?:u8|u|U|L)?"(?:\\.|[^"\\\n])*" | (?:u8|u|U|L)?'(?:\\.|[^'\\\n])+' )
  | (?P<number> (?:0[xX][0-9a-fA-F']+|\d[\d']*(?:\.\d*)?(?:[eE][+-]?\d+)?)[uUlLfF]* )
  | (?P<word> [A-Za-z_]\w* )
  | (?P<punct> ->\*?|<<=|>>=|<=>|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|\+=|-=|::|[-+*/%&|^~!<>=?:;,.(){}\[\]])
  | (?P<space> \s+ )
  | (?P<other> . )
""", re.X | re.S)
PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "&&": "||",
        "||": "&&", "++": "--", "--": "++", "+": "-", "-": "+", "+=": "-=", "-=": "+=",
        "true": "false", "false": "true"}
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "alignof", "static_assert",
            "delete", "new", "throw", "case", "do", "else", "decltype", "noexcept", "catch"}
BUILTIN = {"int", "char", "bool", "long", "short", "unsigned", "double", "float", "void",
           "size_t", "int64_t", "uint64_t", "int32_t", "uint32_t"}
STOP = {";", "{", "}", "&&", "||", "?", "=", "return"}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def tokens(text: str) -> list[Token]:
    """The code tokens of a C++ source (no comments, literals' insides, preprocessor lines)."""
    blanked = PREPROCESSOR.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    found = []
    for match in TOKEN.finditer(blanked):
        kind = next(k for k in ("skip", "raw", "string", "number", "word", "punct", "space",
                                "other") if match.group(k) is not None)
        if kind not in ("skip", "space"):
            found.append(Token(kind, match.group(), match.start()))
    return found


def template_brackets(toks: list[Token]) -> set[int]:
    """Indexes of the `<` and `>` (or `>>`) tokens that are template brackets: a `<` after a
    name whose matching `>` comes, at the same parenthesis depth, before anything that ends
    an expression."""
    brackets: set[int] = set()
    for i, tok in enumerate(toks):
        if tok.text != "<" or i == 0 or toks[i - 1].kind != "word" or toks[i - 1].text in KEYWORDS:
            continue
        depth, angle = 0, 1
        for j in range(i + 1, len(toks)):
            text = toks[j].text
            if text in "([":
                depth += 1
            elif text in ")]":
                depth -= 1
                if depth < 0:
                    break
            elif depth == 0 and text in STOP:
                break
            elif depth == 0 and text == "<" and toks[j - 1].kind == "word":
                angle += 1
            elif depth == 0 and text in (">", ">>"):
                angle -= len(text)
                if angle <= 0:
                    brackets.update((i, j))
                    break
    return brackets


def cpp_edits(text: str) -> list[Edit]:
    toks = tokens(text)
    brackets = template_brackets(toks)
    edits: list[Edit] = []
    for i, tok in enumerate(toks):
        before = toks[i - 1].text if i else ""
        after = toks[i + 1].text if i + 1 < len(toks) else ""
        if before == "operator" or i in brackets:
            continue
        if tok.text in ("&&", "||") and not _rvalue_reference(toks, i):
            chain = _chain(toks, i)
            if chain[0] == i:   # one mutant per chain: `a || b || c` → `a && b && c`
                start, end = toks[chain[0]].start, toks[chain[-1]].end
                pieces, at = [], start
                for j in chain:
                    pieces += [text[at:toks[j].start], FLIP[tok.text]]
                    at = toks[j].end
                edits.append(Edit("and-or", start, end, "".join(pieces)))
            continue
        if tok.text in FLIP and tok.text not in ("&&", "||"):
            if tok.text in ("+", "-") and before in ("(", ",", "=", "return", "[", "{"):
                continue   # a sign, not an operation (±1 of the literal covers it)
            if tok.text in ("+", "+=") and "string" in (toks[i - 1].kind, toks[i + 1].kind):
                continue   # a concatenation: `-` would not compile
            add_op = {"++": "inc-dec", "--": "inc-dec",
                      "true": "true-false", "false": "true-false", "+": "add-sub",
                      "-": "add-sub", "+=": "add-sub", "-=": "add-sub"}.get(tok.text,
                                                                             "cmp-flip")
            edits.append(Edit(add_op, tok.start, tok.end, FLIP[tok.text]))
        elif tok.text == "!":
            edits.append(Edit("not-removed", tok.start, tok.end, ""))
        elif tok.kind == "number" and _integer(tok.text) is not None:
            value, suffix = _integer(tok.text)
            edits.append(Edit("num+1", tok.start, tok.end, f"{value + 1}{suffix}"))
            if value > 0:
                edits.append(Edit("num-1", tok.start, tok.end, f"{value - 1}{suffix}"))
        elif tok.text == "return" and after not in (";", "{", "0", "nullptr", "false", "std") \
                and not _in_lambda(toks, i):
            end = _statement_end(toks, i)
            if end is not None:   # X still evaluated: no local left unused (-Werror)
                value = text[toks[i + 1].start:toks[end].start]
                edits.append(Edit("return-zero", tok.start, toks[end].end,
                                  f"{{ (void)({value}); return {{}}; }}"))
        if before in (";", "{", "}") and tok.kind == "word" and tok.text not in KEYWORDS:
            end = _call_statement(toks, i)
            if end is not None:
                edits.append(Edit("call-removed", tok.start, toks[end].end,
                                  _arguments_kept(text, toks, i, end)))
    return edits


def _arguments_kept(text: str, toks: list[Token], i: int, end: int) -> str:
    """`f(a, g(b));` without the call: `(void)(a), (void)(g(b));` — the arguments are still
    evaluated (as PIT's void-call mutator leaves them), and no parameter is left unused
    (-Werror=unused-parameter)."""
    open_at = next(j for j in range(i, end) if toks[j].text == "(")
    args, depth, start = [], 0, toks[open_at].end
    for j in range(open_at + 1, end - 1):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(toks[j].text, 0)
        if depth == 0 and toks[j].text == ",":
            args.append(text[start:toks[j].start].strip())
            start = toks[j].end
    last = text[start:toks[end - 1].start].strip()
    args += [last] if last else []
    return ", ".join(f"(void)({a})" for a in args) + ";" if args else ""


def _chain(toks: list[Token], i: int) -> list[int]:
    """The indexes of the `&&`/`||` of one expression at the depth of token i: a chain has
    one kind (gcc's -Wparentheses wants parentheses around a mix), so all flip together."""
    found = [i]
    for step in (-1, 1):
        depth, j = 0, i + step
        while 0 <= j < len(toks):
            text = toks[j].text
            if text in (")", "]") if step == 1 else text in ("(", "["):
                if depth == 0:
                    break
                depth -= 1
            elif text in ("(", "[") if step == 1 else text in (")", "]"):
                depth += 1
            elif depth == 0 and text in (";", "{", "}", ",", "?", ":", "=", "return"):
                break
            elif depth == 0 and text == toks[i].text:
                found.append(j)
            j += step
    return sorted(found)


def _in_lambda(toks: list[Token], i: int) -> bool:
    """Whether token i is in the body of a lambda without `-> T` (its return type is deduced:
    `return {}` would not compile)."""
    depth, j = 0, i - 1
    while j >= 0 and not (toks[j].text == "{" and depth == 0):
        depth += {"}": 1, "{": -1}.get(toks[j].text, 0)
        j -= 1
    j -= 1
    while j >= 0 and toks[j].text in ("mutable", "noexcept", "constexpr"):
        j -= 1
    if j >= 0 and toks[j].text == ")":
        depth = 0
        while j >= 0:
            depth += {")": 1, "(": -1}.get(toks[j].text, 0)
            if depth == 0:
                break
            j -= 1
        j -= 1
    return j >= 0 and toks[j].text == "]"


def _rvalue_reference(toks: list[Token], i: int) -> bool:
    """`T&& x`, `auto&& x`, `Fn&&)`: a reference, not a logical and."""
    before, after = toks[i - 1], toks[i + 1] if i + 1 < len(toks) else None
    if after is None or after.text in (")", ",", "...", ">"):
        return True
    # A type is PascalCase (Google style), a builtin, or qualified; a local is snake_case.
    type_like = before.kind == "word" and (before.text[0].isupper() or before.text in BUILTIN
                                           or (i >= 2 and toks[i - 2].text == "::"))
    return before.text in ("auto", ">", "const") or (
        type_like and after.kind == "word" and i + 2 < len(toks)
        and toks[i + 2].text in (",", ")", "=", ";", "{", "("))


def _integer(text: str) -> tuple[int, str] | None:
    match = re.fullmatch(r"(0[xX][0-9a-fA-F']+|\d[\d']*)([uUlL]*)", text)
    if not match:
        return None
    digits = match.group(1).replace("'", "")
    return int(digits, 16 if digits[:2].lower() == "0x" else 8 if digits.startswith("0")
               and len(digits) > 1 else 10), match.group(2)


def _statement_end(toks: list[Token], i: int) -> int | None:
    """The index of the `;` ending the statement that starts at token i."""
    depth = 0
    for j in range(i + 1, len(toks)):
        text = toks[j].text
        if text in "([{":
            depth += 1
        elif text in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif text == ";" and depth == 0:
            return j
    return None


def _call_statement(toks: list[Token], i: int) -> int | None:
    """The `;` of a statement that is only a call, `a::b.c->d(...);`, starting at token i."""
    j = i
    while j + 2 < len(toks) and toks[j + 1].text in ("::", ".", "->") and toks[j + 2].kind == "word":
        j += 2
    if j + 1 >= len(toks) or toks[j + 1].text != "(":
        return None
    depth = 0
    for k in range(j + 1, len(toks)):
        if toks[k].text == "(":
            depth += 1
        elif toks[k].text == ")":
            depth -= 1
            if depth == 0:
                return k + 1 if k + 1 < len(toks) and toks[k + 1].text == ";" else None
        elif toks[k].text in (";", "{", "}"):
            return None
    return None
