"""The condition under which a site is reached inside its function.

A site's :attr:`~miner.model.Site.guards` (the compound statements around it)
and :attr:`~miner.model.Site.exits` (the earlier statements it must get past)
are joined into ONE boolean :class:`Condition` by :func:`condition_of`. Pure
functions, no I/O.

* Atoms are source expressions. A guard's test is parsed with :mod:`ast` and
  its ``and`` / ``or`` / ``not`` become structure, so ``a and not b`` is two
  atoms. The same expression spelled twice (``x is None`` and
  ``not (x is not None)``) is one atom.
* Negation is pushed inward and written the Python way: ``not (x is not
  None)`` reads ``x is None``, ``not (a == b)`` ``a != b``, ``not (a < b)``
  ``a >= b`` (as for numbers: not so for sets or NaN), ``not (x in y)``
  ``x not in y``, ``not (not x)`` ``x``. No double negation is ever written.
* What each guard kind adds: ``if`` / ``exit`` / ``asserted`` their test (false
  when ``negated``), ``while`` its test, ``while-else`` and ``exit-while`` its
  test false, ``for`` the atom ``target in iter`` (the body runs for some item),
  ``except`` the atom "try body raised T" (``exit-except``: it did not; one
  atom per handler),
  ``case`` / ``exit-case`` the atom "subject matches pattern" and the case's
  ``if`` guard, the site's own ``assert`` its test false, ``unreachable``
  false. ``with``, ``try``, ``finally``, ``try-else`` and ``for-else`` add
  nothing. No atoms at all is ``True``.
* The conjunction is simplified by the ``boolean.py`` library (duplicates,
  ``a and not a``, absorption, De Morgan), not by rules of our own, and its
  result is read back into a :class:`Condition` whose operands keep source
  order (by each operand's first atom).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import boolean

from miner.model import AtomKind, Condition, ConditionOp, Guard, Site

__all__ = [
    "Condition",
    "Reach",
    "condition_from",
    "condition_of",
    "atom_names",
    "atom_value",
    "implied",
    "possible",
    "reach_of",
    "site_reach",
    "spellings",
]

#: Above this many atoms the conjunction is only flattened, not simplified
#: (the library's pairwise steps grow with the square of the operands).
MAX_SIMPLIFIED_ATOMS = 64


def condition_of(site: Site) -> Condition:
    """The condition under which ``site`` is reached inside its function (and
    raises, for an ``assert``: its test is false), simplified."""
    return condition_from(site.guards, site.exits)


def condition_from(
    guards: Sequence[Guard], exits: Sequence[Guard] = (), simplify: bool = True
) -> Condition:
    """The simplified conjunction of what ``guards`` and ``exits`` require, in
    source order (by line); with ``simplify`` false, only flattened (a
    contradiction then keeps its terms instead of becoming ``false``)."""
    return reach_of(guards, exits, simplify).condition


@dataclass(frozen=True, slots=True)
class Reach:
    """A site's condition and, for each of its atoms, the guard or exit it
    comes from (by the atom's positive text, :attr:`Condition.atom`): the last
    guard whose whole test is that atom, else the first that reads it."""

    condition: Condition
    origins: dict[str, Guard]
    whole: dict[str, Guard] = field(default_factory=dict)
    """Atom -> the last guard or exit whose test is that atom alone."""
    implied: dict[tuple[str, bool], Guard] = field(default_factory=dict)
    """(atom, negated) -> the last guard or exit that requires that literal
    by itself: its test is an ``and`` with the literal among its operands
    (``if a and b:`` requires ``a``; ``if not (a and not b): return`` does not)."""
    reads: dict[tuple[str, bool], Guard] = field(default_factory=dict)
    """(atom, negated) -> the first guard or exit whose requirement, negation
    pushed inward, has that literal anywhere: only such a one can make the
    literal necessary (``if refresh and not (cert and key): raise`` can
    require ``key``; ``if key and not cert: raise`` can only require ``not key``)."""
    literals: tuple[tuple[frozenset[tuple[str, bool]], Guard], ...] = ()
    """Each guard or exit with every literal of its requirement."""
    clauses: tuple[tuple[frozenset[tuple[str, bool]], Guard], ...] = ()
    """Each guard or exit whose requirement, negation pushed inward, is one
    literal or an ``or`` of literals (``not (a and b)``), with them."""

    def forcing(self, key: tuple[str, bool]) -> Guard | None:
        """The first guard or exit whose requirement is an ``or`` of literals
        with ``key`` among them and every other one false where the
        condition holds (its negation is a conjunct): the one that makes the
        literal necessary (``not (decode and dcp > 1 and radix)`` makes
        ``dcp <= 1`` necessary when ``decode`` and ``radix`` are conjuncts;
        ``not (decode and dcp > 1 and backend not in (...))`` does not)."""
        tops = {(c.atom, c.negated) for c in self.condition.conjuncts() if c.op == "atom"}
        for found, guard in self.clauses:
            if key in found and all(
                (atom, not negated) in tops for atom, negated in found if (atom, negated) != key
            ):
                return guard
        return None

    def origin(self, atom: Condition) -> Guard | None:
        """The guard or exit ``atom`` (a leaf of :attr:`condition`) is read
        from: one whose test is the atom alone, else one that requires the
        literal with its polarity, else the first that makes it necessary
        (:meth:`forcing`), else the first that has the literal, else the
        first that reads the atom."""
        key = (atom.atom, atom.negated)
        return (
            self.whole.get(atom.atom)
            or self.implied.get(key)
            or self.forcing(key)
            or self.reads.get(key)
            or self.origins.get(atom.atom)
        )

    def origin_of(self, cond: Condition) -> Guard | None:
        """The guard or exit a conjunct of :attr:`condition` comes from: for
        an atom :meth:`origin`; for an ``or`` (or ``and``) of atoms, the last
        one whose requirement has every literal of it (``if key and not
        isfile(key): raise`` for ``not key or isfile(key)``), else the
        origin of its first atom."""
        atoms = cond.atoms()
        if cond.op == "atom" or not atoms:
            return self.origin(cond) if cond.op == "atom" else None
        wanted = {(a.atom, a.negated) for a in atoms}
        found = [guard for literals, guard in self.literals if wanted <= literals]
        return found[-1] if found else self.origin(atoms[0])


def reach_of(guards: Sequence[Guard], exits: Sequence[Guard] = (), simplify: bool = True) -> Reach:
    """:func:`condition_from` with the origin of every atom."""
    builder = _Builder()
    terms = []
    whole: dict[str, Guard] = {}
    implied: dict[tuple[str, bool], Guard] = {}
    reads: dict[tuple[str, bool], Guard] = {}
    sets: list[tuple[frozenset[tuple[str, bool]], Guard]] = []
    clauses: list[tuple[frozenset[tuple[str, bool]], Guard]] = []
    for guard in sorted([*exits, *guards], key=lambda g: g.line):
        builder.current = guard
        term = builder.guard(guard)
        if term is not None:
            terms.append(term)
            literals = builder.literals(term)
            for literal, negated in literals:
                implied[(builder.atoms[literal].positive, negated)] = guard
            if len(literals) == 1 and builder.is_literal(term):
                whole[builder.atoms[literals[0][0]].positive] = guard
            every = frozenset(
                (builder.atoms[n].positive, negated) for n, negated in builder.every_literal(term)
            )
            for key in every:
                reads.setdefault(key, guard)
            sets.append((every, guard))
            if builder.is_clause(term):
                clauses.append((every, guard))
    condition = builder.condition(terms, simplify)
    return Reach(
        absorbed(condition) if simplify else condition,
        builder.origins,
        whole,
        implied,
        reads,
        tuple(sets),
        tuple(clauses),
    )


#: Most atoms :func:`implied` enumerates the truth assignments of (2 ** 12).
MAX_IMPLIED_ATOMS = 12


def holds(cond: Condition, values: dict[str, bool]) -> bool:
    """The truth of ``cond`` when each atom (by :attr:`Condition.atom`) has
    the truth in ``values``."""
    if cond.op == "atom":
        return values[cond.atom] != cond.negated
    if cond.op == "and":
        return all(holds(a, values) for a in cond.args)
    if cond.op == "or":
        return any(holds(a, values) for a in cond.args)
    return cond.op == "true"


def implied(
    conclusion: Condition, true: Sequence[Condition], false: Sequence[Condition] = ()
) -> bool:
    """Whether ``conclusion`` holds whenever every condition of ``true`` holds
    and none of ``false`` does, the atoms taken as independent truths (two
    atoms over one value, ``x > 0`` and ``x > 5``, are not related); False
    past :data:`MAX_IMPLIED_ATOMS` atoms (not decided). Each assignment of the
    atoms is tried: a truth table, no simplification."""
    names = sorted({a.atom for c in (conclusion, *true, *false) for a in c.atoms()})
    if len(names) > MAX_IMPLIED_ATOMS:
        return False
    for bits in range(1 << len(names)):
        values = {name: bool(bits >> i & 1) for i, name in enumerate(names)}
        if (
            all(holds(c, values) for c in true)
            and not any(holds(c, values) for c in false)
            and not holds(conclusion, values)
        ):
            return False
    return True


def possible(cond: Condition, known: Mapping[str, bool]) -> bool:
    """Whether ``cond`` can still hold when the atoms of ``known`` (by
    :attr:`Condition.atom`) have those truths and every other atom may be
    either: three-valued, so False means false for every completion (an
    ``and`` with a false operand, an ``or`` whose every operand is false)."""
    return _truth(cond, known) is not False


def _truth(cond: Condition, known: Mapping[str, bool]) -> bool | None:
    if cond.op == "atom":
        value = known.get(cond.atom)
        return None if value is None else value != cond.negated
    if cond.op in ("and", "or"):
        truths = [_truth(a, known) for a in cond.args]
        stop = cond.op == "or"  # the truth that decides the whole
        if stop in truths:
            return stop
        return None if None in truths else not stop
    return cond.op == "true"


#: Nodes an atom may have for :func:`atom_value` to evaluate it.
_EVALUATED = (
    ast.Expression,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.Name,
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Load,
    ast.And,
    ast.Or,
    ast.Not,
    ast.Eq,
    ast.NotEq,
    ast.Is,
    ast.IsNot,
    ast.In,
    ast.NotIn,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)
#: The constants ``is`` / ``is not`` compare by identity the same in any Python.
_SINGLETONS = (None, True, False, ...)


def atom_names(atom: Condition) -> frozenset[str]:
    """The bare names an ``expr`` atom reads when it is made only of names,
    literals, comparisons, ``and`` / ``or`` / ``not`` (what :func:`atom_value`
    can evaluate); empty for any other atom (a call, an attribute, a subscript
    may give another value each time)."""
    return _plain_names(atom.atom) if atom.kind == "expr" else frozenset()


@lru_cache(maxsize=4096)
def _plain_names(text: str) -> frozenset[str]:
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return frozenset()
    nodes = list(ast.walk(tree))
    if not all(isinstance(n, _EVALUATED) for n in nodes):
        return frozenset()
    return frozenset(n.id for n in nodes if isinstance(n, ast.Name))


def atom_value(atom: Condition, values: Mapping[str, object]) -> bool | None:
    """The truth of the positive ``atom`` when each of its names has the
    Python value in ``values`` (literals: ``None``, ``0``, ``"x"``,
    ``(1, 2)``), or None when it is not decided: a name without a value,
    a node :func:`atom_names` refuses, ``is`` against anything but ``None``
    / ``True`` / ``False`` / ``...``, or a comparison that raises
    (``0 < None``)."""
    names = atom_names(atom)
    if not names or not names <= values.keys():
        return None
    try:
        return bool(_evaluate(ast.parse(atom.atom, mode="eval").body, values))
    except (_UndecidedError, TypeError, ValueError, ArithmeticError, RecursionError):
        return None


class _UndecidedError(Exception):
    """An atom :func:`atom_value` does not decide."""


def _evaluate(node: ast.expr, values: Mapping[str, object]) -> object:
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_evaluate(e, values) for e in node.elts]
        return set(items) if isinstance(node, ast.Set) else tuple(items)
    if isinstance(node, ast.UnaryOp):  # ``not``: the only one _EVALUATED admits
        return not _evaluate(node.operand, values)
    if isinstance(node, ast.BoolOp):
        found = [bool(_evaluate(v, values)) for v in node.values]
        return all(found) if isinstance(node.op, ast.And) else any(found)
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, values)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(right_node, values)
            if not _compare(op, left, right):
                return False
            left = right
        return True
    raise _UndecidedError


def _compare(op: ast.cmpop, left: object, right: object) -> bool:
    if isinstance(op, (ast.Is, ast.IsNot)):
        if not any(left is v or right is v for v in _SINGLETONS):
            raise _UndecidedError
        return (left is right) == isinstance(op, ast.Is)
    if isinstance(op, (ast.In, ast.NotIn)):
        return (left in right) == isinstance(op, ast.In)  # type: ignore[operator]
    compare = {
        ast.Eq: lambda a, b: a == b,
        ast.NotEq: lambda a, b: a != b,
        ast.Lt: lambda a, b: a < b,
        ast.LtE: lambda a, b: a <= b,
        ast.Gt: lambda a, b: a > b,
        ast.GtE: lambda a, b: a >= b,
    }[type(op)]
    return bool(compare(left, right))


def absorbed(cond: Condition) -> Condition:
    """``cond`` with two steps applied at the top that the library leaves
    undone in a few conditions, until neither applies: absorption, an ``or``
    operand of an ``and`` that has one of the ``and``'s atoms among its own
    is dropped (``a and (a or b)`` is ``a``); and resolution, an atom of an
    ``or`` operand whose negation is an operand of the ``and`` is dropped
    from it (``a and (not a or b)`` is ``a and b``)."""
    if cond.op != "and":
        return cond
    args = list(cond.args)
    while True:
        tops = {a for a in args if a.op != "or"}
        false = {(a.atom, not a.negated) for a in tops if a.op == "atom"}
        out: list[Condition] = []
        for arg in args:
            if arg.op == "or":
                if any(b in tops for b in arg.args):
                    continue
                rest = tuple(
                    b for b in arg.args if not (b.op == "atom" and (b.atom, b.negated) in false)
                )
                if rest and len(rest) < len(arg.args):
                    arg = rest[0] if len(rest) == 1 else Condition("or", rest)
            out.append(arg)
        out = list(dict.fromkeys(out))
        if out == args:
            break
        args = out
    if len(args) == len(cond.args) and tuple(args) == cond.args:
        return cond
    return args[0] if len(args) == 1 else Condition("and", tuple(args))


def site_reach(site: Site, simplify: bool = True) -> Reach:
    """:func:`reach_of` the site's guards and exits."""
    return reach_of(site.guards, site.exits, simplify)


# -- atoms ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Atom:
    key: str
    """Identity: the same expression however spelled (``ast.dump``)."""
    kind: AtomKind
    positive: str
    """The canonical text (``x is None``, ``a == b``, ``a < b``)."""
    negative: str
    """The text of its negation (``x is not None``, ``a != b``, ``a >= b``)."""


#: Comparison operators and their negations; the first of each pair is canonical.
_FLIPS: dict[type, tuple[type, str, str]] = {
    ast.Eq: (ast.NotEq, "==", "!="),
    ast.Is: (ast.IsNot, "is", "is not"),
    ast.In: (ast.NotIn, "in", "not in"),
    ast.Lt: (ast.GtE, "<", ">="),
    ast.Gt: (ast.LtE, ">", "<="),
}
_CANONICAL = {neg: pos for pos, (neg, _, _) in _FLIPS.items()}
_OP_TEXT: dict[type, tuple[str, str]] = {}
for _pos, (_neg, _pos_text, _neg_text) in _FLIPS.items():
    _OP_TEXT[_pos] = (_pos_text, _neg_text)
    _OP_TEXT[_neg] = (_neg_text, _pos_text)
_OP_PATTERN: dict[str, re.Pattern[str]] = {
    text: re.compile(r"\s+".join(re.escape(word) for word in text.split()))
    for pair in _OP_TEXT.values()
    for text in pair
}
#: Expressions written after ``not`` without parentheses.
_PRIMARY = (
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.Subscript,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
)
#: Expressions that need parentheses as an operand of ``and`` / ``or``.
_LOOSE = (ast.IfExp, ast.Lambda, ast.NamedExpr)


def _segment(text: str, node: ast.AST) -> str:
    found = ast.get_source_segment(text, node)
    return found if found is not None else ast.unparse(node)


def _expr_atom(text: str, node: ast.expr) -> tuple[_Atom, bool]:
    """The atom of a leaf expression of ``text`` and whether ``node`` says it
    positively (False: ``node`` is the negated spelling, ``x is not None``)."""
    seg = _segment(text, node)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _OP_TEXT:
        op = type(node.ops[0])
        flipped = _flip(text, node, seg)
        canonical = _CANONICAL.get(op, op)
        key = ast.dump(ast.Compare(node.left, [canonical()], node.comparators))
        if flipped is not None:
            if op in _FLIPS:
                return _Atom("expr:" + key, "expr", seg, flipped), True
            return _Atom("expr:" + key, "expr", flipped, seg), False
    shown = f"({seg})" if isinstance(node, _LOOSE) else seg
    negative = f"not {seg}" if isinstance(node, _PRIMARY) else f"not ({seg})"
    return _Atom("expr:" + ast.dump(node), "expr", shown, negative), True


def _flip(text: str, node: ast.Compare, seg: str) -> str | None:
    """The comparison with its operator negated, spelled as written; None when
    the operator cannot be found between the operands."""
    left, right = node.left, node.comparators[0]
    if not (node.lineno == node.end_lineno == left.end_lineno == right.lineno == 1):
        return None
    data = text.encode("utf-8", "surrogatepass")

    def cut(a: int | None, b: int | None) -> str:
        return data[a:b].decode("utf-8", "surrogatepass")

    middle = cut(left.end_col_offset, right.col_offset)
    written, negated = _OP_TEXT[type(node.ops[0])]
    match = _OP_PATTERN[written].search(middle)
    if match is None:
        return None
    middle = middle[: match.start()] + negated + middle[match.end() :]
    head = cut(node.col_offset, left.end_col_offset)
    tail = cut(right.col_offset, node.end_col_offset)
    return head + middle + tail


def _raised_atom(types: str, line: int) -> _Atom:
    """The atom "the try body raised one of ``types``" (empty: a bare
    ``except:``), for the handler at ``line``: the handler of another ``try``
    is another atom, and the text says which (``(except at line 12)``)."""
    where = f" (except at line {line})"
    if not types:
        what, key = "an exception", ""
        negative = "no exception"
    elif types.startswith("("):
        what, negative = f"one of {types}", f"none of {types}"
    else:
        what, negative = types, f"no {types}"
    if types:
        try:
            key = ast.dump(ast.parse(types, mode="eval").body)
        except (SyntaxError, ValueError, RecursionError):
            key = types
    return _Atom(
        f"raised:{line}:{key}",
        "raised",
        f"try body raised {what}{where}",
        f"try body raised {negative}{where}",
    )


def _match_atom(subject: str, pattern: str) -> _Atom:
    return _Atom(
        f"match:{subject}\x1f{pattern}",
        "match",
        f"{subject} matches {pattern}",
        f"{subject} does not match {pattern}",
    )


def _loop_atom(test: str) -> _Atom:
    """``target in iter`` of a ``for``; a bare tuple target gets parentheses."""
    shown = test
    try:
        loop = ast.parse(f"for {test}: pass").body[0]
    except (SyntaxError, ValueError, RecursionError):
        loop = None
    if isinstance(loop, ast.For):
        target = _segment(f"for {test}: pass", loop.target)
        if isinstance(loop.target, ast.Tuple) and not target.startswith("("):
            shown = f"({target}) in {_segment(f'for {test}: pass', loop.iter)}"
    return _Atom("loop:" + test, "loop", shown, f"not ({shown})")


#: A test's structure, independent of any builder: ``("atom", atom,
#: positive)``, ``("const", bool)``, ``("not", shape)`` or ``("and" | "or",
#: (shapes...))``.
_Shape = tuple[Any, ...]


@lru_cache(maxsize=65536)
def _template(text: str) -> _Shape:
    """The structure of a test's text (cached: the same test text recurs
    across sites and in the card writer)."""
    text = text.strip()
    # An unparenthesized walrus (``if m := f():``) parses only in parentheses.
    for source in (text, f"({text})"):
        try:
            node = ast.parse(source, mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            continue
        return _shape(source, node)
    return ("atom", _Atom("text:" + text, "expr", f"({text})", f"not ({text})"), True)


def spellings(text: str) -> tuple[str, str] | None:
    """(positive, negative) spelling of an atom's text (``x is None``, ``x is
    not None``), or None when the text is not one atom."""
    shape = _template(text)
    if shape[0] != "atom":
        return None
    atom, positive = shape[1], shape[2]
    return (atom.positive, atom.negative) if positive else (atom.negative, atom.positive)


def _shape(text: str, node: ast.expr) -> _Shape:
    if isinstance(node, ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        return (op, tuple(_shape(text, value) for value in node.values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ("not", _shape(text, node.operand))
    if isinstance(node, ast.Constant) and node.value is not Ellipsis:
        return ("const", bool(node.value))
    atom, positive = _expr_atom(text, node)
    return ("atom", atom, positive)


# -- building and simplifying ----------------------------------------------------
#: ``repr`` of an expression over numbered symbols -> the library's
#: simplification of it. Atoms are numbered in order of first appearance, so
#: the 18,526 conditions simplified for SGLang v0.5.19 have 3,820 shapes
#: (``~0`` alone 3,402 times); the library's classes are shared by every
#: algebra and its constants compare by class, so a result serves any builder.
_SIMPLIFIED: dict[str, boolean.Expression] = {}
#: Most shapes kept.
MAX_SHAPES = 1 << 14


def _simplified(expr: boolean.Expression) -> boolean.Expression:
    """``expr.simplify()``, computed once per shape (:data:`_SIMPLIFIED`); the
    result is shared, and only read."""
    key = repr(expr)
    found = _SIMPLIFIED.get(key)
    if found is None:
        found = expr.simplify()
        if len(_SIMPLIFIED) < MAX_SHAPES:
            _SIMPLIFIED[key] = found
    return found


class _Builder:
    """Turns guards into ``boolean.py`` expressions over numbered symbols (one
    per atom, numbered in order of first appearance) and reads the simplified
    result back."""

    def __init__(self) -> None:
        self.algebra = boolean.BooleanAlgebra()
        self.atoms: list[_Atom] = []
        self.index: dict[str, int] = {}
        self.current: Guard | None = None
        self.origins: dict[str, Guard] = {}

    def symbol(self, atom: _Atom, positive: bool = True) -> boolean.Expression:
        number = self.index.get(atom.key)
        if number is None:
            number = self.index[atom.key] = len(self.atoms)
            self.atoms.append(atom)
            if self.current is not None:
                self.origins.setdefault(atom.positive, self.current)
        expr = self.algebra.Symbol(number)
        return expr if positive else self.algebra.NOT(expr)

    def both(self, parts: Sequence[boolean.Expression], op: str = "and") -> boolean.Expression:
        if not parts:
            return self.algebra.TRUE if op == "and" else self.algebra.FALSE
        if len(parts) == 1:
            return parts[0]
        return (self.algebra.AND if op == "and" else self.algebra.OR)(*parts)

    def is_literal(self, term: boolean.Expression) -> bool:
        """``term`` is one atom, negated any number of times (``not (not x)``)."""
        while isinstance(term, self.algebra.NOT):
            term = term.args[0]
        return isinstance(term, self.algebra.Symbol)

    def is_clause(self, term: boolean.Expression) -> bool:
        """``term``, negation pushed inward, is one literal or an ``or`` of literals."""
        expr = term.literalize()
        if isinstance(expr, self.algebra.OR):
            expr = expr.flatten()  # (a or b) or c
        parts = expr.args if isinstance(expr, self.algebra.OR) else (expr,)
        return all(
            isinstance(part, self.algebra.Symbol)
            or (
                isinstance(part, self.algebra.NOT) and isinstance(part.args[0], self.algebra.Symbol)
            )
            for part in parts
        )

    def every_literal(self, term: boolean.Expression) -> set[tuple[int, bool]]:
        """Every literal of ``term`` once negation is pushed inward, as (atom
        number, negated)."""
        out = set()
        stack = [term.literalize()]
        while stack:
            expr = stack.pop()
            negated = isinstance(expr, self.algebra.NOT)
            leaf = expr.args[0] if negated else expr
            if isinstance(leaf, self.algebra.Symbol):
                out.add((leaf.obj, negated))
            elif isinstance(expr, (self.algebra.AND, self.algebra.OR)):
                stack.extend(expr.args)
        return out

    def literals(self, term: boolean.Expression) -> list[tuple[int, bool]]:
        """The literals ``term`` requires by itself, as (atom number,
        negated): the term when it is one, else the literal operands of the
        ``and`` it is once negation is pushed inward."""
        expr = term.literalize()
        parts = expr.args if isinstance(expr, self.algebra.AND) else (expr,)
        out = []
        for part in parts:
            if isinstance(part, self.algebra.Symbol):
                out.append((part.obj, False))
            elif isinstance(part, self.algebra.NOT) and isinstance(
                part.args[0], self.algebra.Symbol
            ):
                out.append((part.args[0].obj, True))
        return out

    # tests
    def test(self, text: str) -> boolean.Expression:
        """A test's text as structure: ``and`` / ``or`` / ``not`` split, the
        rest atoms; text that does not parse is one atom."""
        return self._build(_template(text))

    def _build(self, shape: _Shape) -> boolean.Expression:
        kind = shape[0]
        if kind == "atom":
            return self.symbol(shape[1], shape[2])
        if kind == "const":
            return self.algebra.TRUE if shape[1] else self.algebra.FALSE
        if kind == "not":
            return self.algebra.NOT(self._build(shape[1]))
        return self.both([self._build(part) for part in shape[1]], kind)

    def case(self, subject: str, test: str) -> boolean.Expression:
        """``case pattern if guard``: the match and the guard's structure."""
        source = f"match _:\n case {test}:\n  pass"
        try:
            match = ast.parse(source).body[0]
        except (SyntaxError, ValueError, RecursionError):
            return self.symbol(_match_atom(subject, test))
        assert isinstance(match, ast.Match)
        case = match.cases[0]
        parts = [self.symbol(_match_atom(subject, _segment(source, case.pattern)))]
        if case.guard is not None:
            parts.append(self.test(_segment(source, case.guard)))
        return self.both(parts)

    def guard(self, guard: Guard) -> boolean.Expression | None:
        """What one guard or exit requires, or None when it requires nothing."""
        kind = guard.kind
        term: boolean.Expression
        if kind in ("if", "exit", "asserted", "assert", "while", "exit-while"):
            term = self.test(guard.test)
        elif kind == "while-else":
            return self.algebra.NOT(self.test(guard.test))
        elif kind in ("for", "async for"):
            term = self.symbol(_loop_atom(guard.test))
        elif kind in ("except", "except*", "exit-except"):
            term = self.symbol(_raised_atom(guard.test, guard.line))
        elif kind in ("case", "exit-case"):
            term = self.case(guard.subject or "", guard.test)
        elif kind == "unreachable":
            return self.algebra.FALSE
        else:
            return None
        return self.algebra.NOT(term) if guard.negated else term

    # the result
    def condition(self, terms: Iterable[boolean.Expression], simplify: bool = True) -> Condition:
        expr = self.both(list(terms))
        if simplify and len(self.atoms) <= MAX_SIMPLIFIED_ATOMS:
            expr = _simplified(expr)
        else:
            expr = expr.literalize()
            if isinstance(expr, self.algebra.AND):
                expr = expr.flatten()
        return self.read(expr)

    def read(self, expr: boolean.Expression) -> Condition:
        """The library's expression as a :class:`Condition`."""
        return self._read(expr)[0]

    def _read(self, expr: boolean.Expression) -> tuple[Condition, int]:
        """The condition and the number of its first atom (operands are put
        in that order: source order)."""
        algebra = self.algebra
        if expr == algebra.TRUE:
            return Condition.TRUE, -1
        if expr == algebra.FALSE:
            return Condition.FALSE, -1
        if isinstance(expr, algebra.Symbol):
            return self._leaf(expr.obj, False), expr.obj
        if isinstance(expr, algebra.NOT):
            inner = expr.args[0]
            if isinstance(inner, algebra.Symbol):
                return self._leaf(inner.obj, True), inner.obj
            return self._read(expr.demorgan())
        op: ConditionOp = "and" if isinstance(expr, algebra.AND) else "or"
        operands: list[boolean.Expression] = []
        pending = list(reversed(expr.args))
        while pending:  # (a and b) and c: one "and" of a, b, c
            arg = pending.pop()
            if isinstance(arg, type(expr)):
                pending.extend(reversed(arg.args))
            else:
                operands.append(arg)
        # The library may leave one operand twice once nested ones are
        # flattened (``a and (a and b)``): each is kept once.
        args = list(dict.fromkeys(self._read(arg) for arg in operands))
        args.sort(key=lambda pair: pair[1])
        return Condition(op, tuple(c for c, _ in args)), args[0][1]

    def _leaf(self, number: int, negated: bool) -> Condition:
        atom = self.atoms[number]
        shown = atom.negative if negated else atom.positive
        return Condition("atom", atom=atom.positive, negated=negated, kind=atom.kind, shown=shown)
