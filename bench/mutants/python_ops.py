"""Python mutants, from the AST: each an edit of the exact source span of one node (ast's
lineno/col_offset/end_*), so the mutant is a one-span diff of the real file. Docstrings, type
annotations, `__future__` imports and the arguments of help and logging calls are left alone;
an edit whose node's span does not parse back to the node (positions inside f-strings) is
not made, and the sample skips a mutant whose module does not parse (python_parses)."""

from __future__ import annotations

import ast
import html
import re

from .model import Edit

FLIPS = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "==",
         ast.In: "not in", ast.NotIn: "in", ast.Is: "is not", ast.IsNot: "is"}
OWN_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
OP_TEXT = re.compile(r"\bnot\s+in\b|\bis\s+not\b|\bin\b|\bis\b|<=|>=|==|!=|<|>")
SWAPS = {"all": "any", "any": "all", "min": "max", "max": "min"}
# Calls whose arguments are help or log text, not behaviour.
QUIET_CALLS = {"add_argument", "add_parser", "add_argument_group", "add_subparsers",
               "add_mutually_exclusive_group", "log", "debug", "info", "warning", "warn"}
ANNOTATION_FIELDS = {"annotation", "returns"}
NOT_NUMERIC = (ast.JoinedStr, ast.List, ast.Tuple, ast.ListComp, ast.Dict, ast.Set)
ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#39|#x27);")
BOOL_WORD = re.compile(r"\b(?:and|or)\b")
SIGN = re.compile(r"[+-]=?")


class _Spans:
    """Character offsets of nodes in one file's text (ast counts columns in UTF-8 bytes)."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode()[:col].decode(errors="replace"))

    def span(self, node: ast.AST, check: bool = True) -> tuple[int, int] | None:
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        if check and isinstance(node, ast.expr):
            try:
                back = ast.parse("(" + self.text[start:end] + ")", mode="eval").body
            except SyntaxError:
                return None
            if ast.dump(back) != ast.dump(node):
                return None
        return start, end


def python_edits(text: str) -> list[Edit]:
    tree = ast.parse(text)
    spans = _Spans(text)
    edits: list[Edit] = []
    _visit(tree, spans, edits, in_fstring=False)
    return edits


def python_parses(text: str) -> bool:
    """Whether a mutated module still parses (checked for the sampled mutants only: parsing
    every candidate costs a minute over the tree)."""
    try:
        ast.parse(text)
        return True
    except SyntaxError:
        return False


def _visit(node: ast.AST, spans: _Spans, edits: list[Edit], in_fstring: bool) -> None:
    if isinstance(node, (ast.ImportFrom, ast.Import)):
        return
    if isinstance(node, ast.Call) and _name(node.func) in QUIET_CALLS:
        return
    _mutate(node, spans, edits, in_fstring)
    body = getattr(node, "body", None)
    docstring = (body[0] if isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                 and isinstance(body[0].value, ast.Constant) else None)
    for field, value in ast.iter_fields(node):
        if field in ANNOTATION_FIELDS or (isinstance(node, ast.AnnAssign) and field == "target"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST) and child is not docstring:
                _visit(child, spans, edits, isinstance(node, ast.FormattedValue))


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _between(spans: _Spans, left: ast.AST, right: ast.AST, pattern: re.Pattern[str],
             wanted: str) -> tuple[int, int] | None:
    """The offsets of the operator token `wanted` between two operands."""
    a, b = spans.span(left, check=False), spans.span(right, check=False)
    if a is None or b is None:
        return None
    for match in pattern.finditer(spans.text, a[1], b[0]):
        if " ".join(match.group().split()) == wanted:
            return match.start(), match.end()
    return None


def _mutate(node: ast.AST, spans: _Spans, edits: list[Edit], in_fstring: bool) -> None:
    add = edits.append
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            at = _between(spans, operands[i], operands[i + 1], OP_TEXT, OWN_TEXT[type(op)])
            if at:
                add(Edit("cmp-flip", *at, FLIPS[type(op)]))
    elif isinstance(node, ast.BoolOp):
        word = "and" if isinstance(node.op, ast.And) else "or"
        for left, right in zip(node.values, node.values[1:]):
            at = _between(spans, left, right, BOOL_WORD, word)
            if at:
                add(Edit("and-or", *at, "or" if word == "and" else "and"))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        whole, operand = spans.span(node), spans.span(node.operand, check=False)
        if whole and operand:
            add(Edit("not-removed", whole[0], operand[0], ""))
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        at = spans.span(node)
        if at:
            add(Edit("num+1", *at, repr(node.value + 1)))
            if node.value != 0:
                add(Edit("num-1", *at, repr(node.value - 1)))
    elif isinstance(node, ast.Return) and node.value is not None:
        at = spans.span(node.value)
        constant = _constant_like(node.value)
        if at and constant is not None:
            add(Edit("return-const", *at, constant))
    elif isinstance(node, ast.Call):
        _mutate_call(node, spans, add, in_fstring)
    elif isinstance(node, ast.If) and not _guard(node.test):
        body = spans.span(node.body[0], check=False), spans.span(node.body[-1], check=False)
        if body[0] and body[1] and not _only_pass(node.body):
            add(Edit("if-body-removed", body[0][0], body[1][1], "pass"))
        test = spans.span(node.test)
        if test and not (isinstance(node.test, ast.Constant) and node.test.value is True):
            add(Edit("if-forced", *test, "True"))
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = (node.left, node.right) if isinstance(node, ast.BinOp) else \
            (node.target, node.value)
        if not any(_textual(x) for x in (left, right)):
            sign = "+" if isinstance(node.op, ast.Add) else "-"
            suffix = "" if isinstance(node, ast.BinOp) else "="
            at = _between(spans, left, right, SIGN, sign + suffix)
            if at:
                add(Edit("add-sub", *at, ("-" if sign == "+" else "+") + suffix))
    elif isinstance(node, (ast.Break, ast.Continue)):
        at = spans.span(node)
        if at:
            add(Edit("break-continue", *at,
                     "continue" if isinstance(node, ast.Break) else "break"))
    elif isinstance(node, ast.JoinedStr):
        at = spans.span(node, check=False)
        if at:
            for match in ENTITY.finditer(spans.text, *at):
                add(Edit("fstring-unescape", match.start(), match.end(),
                         html.unescape(match.group())))


def _mutate_call(node: ast.Call, spans: _Spans, add, in_fstring: bool) -> None:
    name = _name(node.func)
    if isinstance(node.func, ast.Name) and name in SWAPS:
        at = spans.span(node.func)
        if at:
            add(Edit("all-any" if name in ("all", "any") else "min-max", *at, SWAPS[name]))
    if name in ("sorted", "sort"):
        reverse = next((k for k in node.keywords if k.arg == "reverse"), None)
        if reverse is not None:
            at = spans.span(reverse.value)
            if at:
                value = spans.text[at[0]:at[1]]
                flipped = {"True": "False", "False": "True"}.get(value, f"not ({value})")
                add(Edit("sort-reverse", *at, flipped))
        else:
            at = spans.span(node, check=False)
            if at and spans.text[at[1] - 1] == ")":
                inside = spans.text[at[0]:at[1] - 1].rstrip()
                sep = "" if inside.endswith((",", "(")) else ", "
                add(Edit("sort-reverse", at[1] - 1, at[1] - 1, sep + "reverse=True"))
    if node.args and not isinstance(node.args[0], ast.Starred) and name != "super":
        whole, first = spans.span(node), spans.span(node.args[0])
        if whole and first:
            add(Edit("fstring-unescape" if in_fstring else "call-to-arg", *whole,
                     spans.text[first[0]:first[1]]))


def _constant_like(value: ast.expr) -> str | None:
    """`return X` → a constant of X's kind (None when X is of no visible kind)."""
    if isinstance(value, ast.Constant):
        if value.value is None or type(value.value) in (int, float):
            return None   # nothing to change / the numeric operators do it
        if isinstance(value.value, bool):
            return repr(not value.value)
        return '""' if value.value else '"x"'
    kinds = {ast.Compare: "False", ast.BoolOp: "False", ast.List: "[]", ast.ListComp: "[]",
             ast.Dict: "{}", ast.DictComp: "{}", ast.Set: "set()", ast.SetComp: "set()",
             ast.Tuple: "()", ast.JoinedStr: '""'}
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return "False"
    return kinds.get(type(value), "None")


def _guard(test: ast.expr) -> bool:
    """`if __name__ == "__main__":` and `if TYPE_CHECKING:` are not behaviour."""
    text = ast.dump(test)
    return "'__name__'" in text or "'TYPE_CHECKING'" in text


def _only_pass(body: list[ast.stmt]) -> bool:
    return all(isinstance(s, ast.Pass) for s in body)


def _textual(node: ast.expr) -> bool:
    return isinstance(node, NOT_NUMERIC) or (isinstance(node, ast.Constant)
                                             and isinstance(node.value, (str, bytes)))
