"""Conditions and code in plain words: the phrases the card writer builds sentences from.

Pure functions over :class:`~miner.model.Condition` atoms and source text. The
rules, so that no card says "`x is not None` does not hold":

* an atom is phrased with its polarity already pushed inward (the condition
  module spells ``not (x is None)`` as ``x is not None``), so a phrase never
  negates a negative spelling;
* ``x is None`` reads "`x` is `None`", ``x is not None`` "`x` is not `None`";
* a bare name reads "`x` is true" / "`x` is false" when the name says it is a
  flag (``is_``, ``has_``, ``enable``...), else "`x` is truthy" / "`x` is
  falsy (`None`, empty or zero)"; a call "`f()` returns true" / "returns false";
* ``isinstance``, ``hasattr``, ``startswith`` / ``endswith``, ``os.path.exists``
  and ``len`` read as what they test;
* any other comparison is shown as written (``len(batch) <= 0``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from miner.analysis.code import parse_expr
from miner.model import Condition, ConditionOp

#: Names that hold a flag (true or false), not a value.
_FLAGGY = re.compile(
    r"(?:^|_)(?:is|has|have|use|uses|using|enable|enabled|disable|disabled|should|can|"
    r"allow|allowed|with|do|need|needs|skip|support|supports|supported|requires?|"
    r"apply|force|keep|return|debug|verbose|strict|ok|valid|ready|done|initialized|"
    r"available|loaded|compiled|captured|training|causal|packed|sparse|fused|cuda|hip|npu)"
    r"(?:_|$)"
)
_PATH_TESTS = {
    "exists": ("the path {0} exists", "the path {0} does not exist"),
    "isfile": ("{0} is a file", "{0} is not a file"),
    "isdir": ("{0} is a folder", "{0} is not a folder"),
    "isabs": ("{0} is an absolute path", "{0} is a relative path"),
}


def code(text: str) -> str:
    """Inline code that survives backticks in ``text``."""
    text = " ".join(text.split())
    if "`" not in text:
        return f"`{text}`"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def shown(default: str | None) -> str:
    """A default as users type it: ``'auto'`` -> ``auto``; other text as it is."""
    if default is None:
        return "None"
    if len(default) >= 2 and default[0] == default[-1] and default[0] in "'\"":
        return default[1:-1] or '""'
    return default


def values_list(values: Iterable[str], joiner: str = "or") -> str:
    items = [code(v) for v in values]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {joiner} " + items[-1]


def joined(parts: Sequence[str], joiner: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" {joiner} " + parts[-1]


def sentence(text: str) -> str:
    """``text`` with a capital first letter and a final full stop."""
    text = text.strip()
    if not text:
        return text
    if text[0].islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?", ":")) else text + "."


def flaggy(name: str) -> bool:
    """Does the last part of ``name`` read as a flag (``is_cuda``, ``enable_x``)?"""
    last = re.sub(r"\W", "_", name.rsplit(".", 1)[-1]).strip("_").lower()
    return bool(_FLAGGY.search(last))


def _segment(text: str, node: ast.AST) -> str:
    found = ast.get_source_segment(text, node)
    return " ".join((found if found is not None else ast.unparse(node)).split())


def _call_words(text: str, node: ast.Call, positive: bool) -> str | None:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    args = node.args
    if name == "isinstance" and len(args) == 2:
        what, kind = _segment(text, args[0]), _segment(text, args[1])
        verb = "is" if positive else "is not"
        return f"{code(what)} {verb} an instance of {code(kind)}"
    if name == "hasattr" and len(args) == 2 and isinstance(args[1], ast.Constant):
        what, attr = _segment(text, args[0]), str(args[1].value)
        return f"{code(what)} has {'an' if positive else 'no'} attribute {code(attr)}"
    if name in ("startswith", "endswith") and isinstance(func, ast.Attribute) and len(args) == 1:
        what, start = _segment(text, func.value), _segment(text, args[0])
        stem = name[: -len("swith")]  # "start" / "end"
        verb = f"{stem}s with" if positive else f"does not {stem} with"
        return f"{code(what)} {verb} {code(start)}"
    if name in _PATH_TESTS and len(args) == 1 and "path" in (_segment(text, func) or ""):
        phrase = _PATH_TESTS[name][0 if positive else 1]
        return phrase.format(code(_segment(text, args[0])))
    if name == "len" and len(args) == 1 and isinstance(func, ast.Name):
        what = _segment(text, args[0])
        return f"{code(what)} is {'non-empty' if positive else 'empty'}"
    if name == "all" and len(args) == 1 and isinstance(func, ast.Name) and positive:
        return f"{code(_segment(text, node))} holds"
    return None


def expr_words(text: str, positive: bool, booleans: frozenset[str] = frozenset()) -> str:
    """A Python expression (the atom as tested, positive) that is true
    (``positive``) or false, in words. A name or attribute whose last part
    reads as a flag (:func:`flaggy`) or is in ``booleans`` (names the commit
    only declares ``bool``) is "true"/"false", any other "truthy"/"falsy"."""
    node = parse_expr(text)
    spelled = " ".join(text.split())
    if node is None:
        truth = "true" if positive else "false"
        return f"{code(spelled.strip('()'))} is {truth}"
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = node.ops[0]
        right = node.comparators[0]
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant):
            is_op = isinstance(op, ast.Is) == positive
            value = code(repr(right.value))
            return f"{code(_segment(text, node.left))} is {'' if is_op else 'not '}{value}"
        return code(spelled) if positive else f"{code(spelled)} is false"
    if isinstance(node, ast.Call):
        found = _call_words(text, node, positive)
        if found is not None:
            return found
        return f"{code(spelled)} returns {'true' if positive else 'false'}"
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        last = spelled.rsplit(".", 1)[-1]
        if flaggy(spelled) or last in booleans:
            return f"{code(spelled)} is {'true' if positive else 'false'}"
        return (
            f"{code(spelled)} is truthy"
            if positive
            else f"{code(spelled)} is falsy (`None`, empty or zero)"
        )
    if isinstance(node, ast.NamedExpr):
        inner = _segment(text, node)
        return f"{code(inner)} is {'truthy' if positive else 'falsy'}"
    return f"{code(spelled)} is {'truthy' if positive else 'falsy'}"


_RAISED = re.compile(r"^try body raised (?P<what>.*) \(except at line (?P<line>\d+)\)$")


@lru_cache(maxsize=65536)
def atom_words(atom: Condition, booleans: frozenset[str] = frozenset()) -> str:
    """One atom of a condition (with its polarity) in plain words (cached);
    ``booleans``: see :func:`expr_words`."""
    positive = not atom.negated
    if atom.kind == "raised":
        m = _RAISED.match(atom.atom)
        if m is None:
            return code(atom.shown)
        what, line = m.group("what"), m.group("line")
        if what == "an exception":
            caught = "an exception"
        elif what.startswith("one of "):
            caught = f"one of {code(what[len('one of ') :])}"
        else:
            caught = code(what)
        if positive:
            return f"the `try` block raised {caught} (handled at line {line})"
        caught = caught.replace("an exception", "any exception").replace("one of ", "any of ")
        return f"the `try` block did not raise {caught} (the handler at line {line} leaves)"
    if atom.kind == "match":
        subject, _, pattern = atom.atom.partition(" matches ")
        verb = "matches" if positive else "does not match"
        return f"{code(subject)} {verb} {code('case ' + pattern)}"
    if atom.kind == "loop":
        if positive:
            return f"inside the loop {code('for ' + atom.atom)}"
        return f"the loop {code('for ' + atom.atom)} has no item"
    text = atom.atom
    if text.startswith("(") and text.endswith(")") and parse_expr(text[1:-1]) is not None:
        text = text[1:-1]
    node = parse_expr(text)
    if isinstance(node, ast.Compare) and not (
        len(node.ops) == 1
        and isinstance(node.ops[0], (ast.Is, ast.IsNot))
        and isinstance(node.comparators[0], ast.Constant)
    ):
        # Comparisons are shown as written, with their polarity (``x >= 1``).
        if positive:
            return code(text)
        if not atom.shown.startswith("not "):
            return code(atom.shown)
        flipped = negate_compare(node)
        if flipped is not None:
            return code(flipped)
        return f"{code(text)} is false"
    return expr_words(text, positive, booleans)


_NEGATED_OPS: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}


def negate_compare(node: ast.Compare) -> str | None:
    """A one-operator comparison with its operator negated (``a < b`` ->
    ``a >= b``), as ``ast.unparse`` writes it; None for a chain."""
    if len(node.ops) != 1 or type(node.ops[0]) not in _NEGATED_OPS:
        return None
    flipped = ast.Compare(node.left, [_NEGATED_OPS[type(node.ops[0])]()], node.comparators)
    try:
        return " ".join(ast.unparse(flipped).split())
    except (ValueError, RecursionError):  # pragma: no cover - malformed trees only
        return None


def negated(cond: Condition) -> Condition:
    """``not cond`` with negation pushed inward (an atom flips its polarity;
    its spelling comes from the condition builder)."""
    if cond.op == "true":
        return Condition.FALSE
    if cond.op == "false":
        return Condition.TRUE
    if cond.op in ("and", "or"):
        op: ConditionOp = "or" if cond.op == "and" else "and"
        return Condition(op, tuple(negated(a) for a in cond.args))
    return flip(cond)


def plural(count: int, words: str) -> str:
    """``count`` and ``words`` with its last word in the plural unless ``count``
    is 1: ``plural(2, "more condition")`` is ``"2 more conditions"``."""
    return f"{count} {words}" if count == 1 else f"{count} {words}s"


#: "try body raised ..." and its negative, most specific first.
_RAISED_NEGATIVES = (
    ("raised an exception", "raised no exception"),
    ("raised one of ", "raised none of "),
    ("raised ", "raised no "),
)


@lru_cache(maxsize=65536)
def flip(atom: Condition) -> Condition:
    """An atom with the other polarity, spelled the way the builder spells it."""
    from miner.analysis.condition import spellings

    if atom.kind == "expr":
        found = spellings(atom.atom)
        if found is not None:
            text = found[0] if atom.negated else found[1]
            return Condition(
                "atom", atom=atom.atom, negated=not atom.negated, kind="expr", shown=text
            )
    if atom.kind == "raised":
        text = atom.atom
        if not atom.negated:  # spelled as :func:`~miner.analysis.condition._raised_atom` does
            for said, negative in _RAISED_NEGATIVES:
                if said in text:
                    text = text.replace(said, negative, 1)
                    break
    elif atom.kind == "match":
        text = atom.atom if atom.negated else atom.atom.replace(" matches ", " does not match ", 1)
    else:
        text = atom.atom if atom.negated else f"not ({atom.atom})"
    return Condition("atom", atom=atom.atom, negated=not atom.negated, kind=atom.kind, shown=text)


def python_text(cond: Condition) -> str:
    """The condition as Python-like text (never ``not (not``)."""
    return cond.text()


# --------------------------------------------------------------------------- source lines


def excerpt_lines(excerpt_text: str, start_line: int) -> dict[int, str]:
    """Line number -> the line's text, for an excerpt."""
    return {start_line + i: line for i, line in enumerate(excerpt_text.split("\n"))}
