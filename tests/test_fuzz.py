"""Fuzz: generated sources with raises and asserts under random nesting.

Hypothesis writes programs from compound statements (``if``/``elif``/``else``,
``for``/``while`` with ``else``, ``try``/``except``/``else``/``finally``,
``except*``, ``with``, ``match``, ``def``/``class``/``async def`` with ``async
for``/``async with``), one-line bodies, semicolons, continuation lines, comments
holding U+2028 and form feeds, and ``\\n``, ``\\r\\n`` or lone ``\\r`` line breaks.
The generator records, for each site, the scope and the guards it expects.

Checked against the standard library's ``ast`` (line and exception of every
site) and against the generator's record (scope, guard kinds, lines and
negation), for the libcst path (units and whole module) and the ``ast``
fallback, which must also agree with each other field by field.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from miner.extract.ast_fallback import collect_ast
from miner.extract.runner import collect, extract_file
from miner.extract.text import decode_source
from miner.model import Site

MAX_DEPTH = 4
Guard = tuple[str, int, bool]  # kind, line, negated


@dataclass
class Expected:
    line: int
    exception: str
    scope: str
    guards: list[Guard]


@dataclass
class Program:
    data: st.DataObject
    lines: list[str] = field(default_factory=list)
    sites: list[Expected] = field(default_factory=list)
    counter: int = 0

    @property
    def next_line(self) -> int:
        return len(self.lines) + 1

    def uid(self) -> int:
        self.counter += 1
        return self.counter

    def draw(self, strategy: st.SearchStrategy) -> object:
        return self.data.draw(strategy)

    def emit(self, indent: int, text: str) -> int:
        line = self.next_line
        self.lines.append("    " * indent + text)
        return line

    def keyword(self, indent: int, text: str) -> int:
        """A clause keyword line (``else:``, ``finally:``, ``case``), sometimes
        after a form feed (white space to CPython, not a line break)."""
        feed = "\x0c" if self.draw(st.booleans()) else ""
        line = self.next_line
        self.lines.append(feed + "    " * indent + text)
        return line


@dataclass(frozen=True)
class Ctx:
    indent: int
    scope: str  # __qualname__ of the enclosing scope
    kind: str  # module, class or function
    guards: tuple[Guard, ...] = ()
    is_async: bool = False
    depth: int = 0

    def inner(self, *guards: Guard) -> Ctx:
        return Ctx(
            self.indent + 1,
            self.scope,
            self.kind,
            self.guards + guards,
            self.is_async,
            self.depth + 1,
        )

    def child(self, name: str, kind: str, is_async: bool = False) -> Ctx:
        if self.kind == "module":
            scope = name
        elif self.kind == "class":
            scope = f"{self.scope}.{name}"
        else:
            scope = f"{self.scope}.<locals>.{name}"
        return Ctx(self.indent + 1, scope, kind, (), is_async, self.depth + 1)


def site_statement(
    p: Program, ctx: Ctx, *, prefix: str = "", extra: tuple[Guard, ...] = ()
) -> None:
    """A raise or assert (possibly after ``prefix`` on the same line)."""
    n = p.uid()
    form = p.draw(st.sampled_from(["call", "bare", "dotted", "fstring", "multiline", "assert"]))
    guards = list(ctx.guards + extra)
    if form == "assert":
        line = p.emit(ctx.indent, f'{prefix}assert c{n}, "message {n}"')
        guards.append(("assert", line, True))
        p.sites.append(Expected(line, "AssertionError", ctx.scope, guards))
        return
    exception = {"dotted": f"errors.E{n}"}.get(form, f"E{n}")
    if form == "multiline":
        line = p.emit(ctx.indent, f"{prefix}raise E{n}(")
        p.emit(ctx.indent + 1, f'"part one {n} "  # a comment\u2028still the comment')
        p.emit(ctx.indent + 1, '"part two"')
        p.emit(ctx.indent, ")")
    elif form == "bare":
        line = p.emit(ctx.indent, f"{prefix}raise E{n}")
    elif form == "fstring":
        line = p.emit(ctx.indent, f'{prefix}raise E{n}(f"value {{v{n}!r}} is bad")')
    else:
        line = p.emit(ctx.indent, f'{prefix}raise {exception}("message {n}")')
    p.sites.append(Expected(line, exception, ctx.scope, guards))


def block(p: Program, ctx: Ctx) -> None:
    real = [statement(p, ctx) for _ in range(p.draw(st.integers(1, 3)))]
    if not any(real):
        p.emit(ctx.indent, "pass")  # a block of comments alone is not a block


def statement(p: Program, ctx: Ctx) -> bool:
    """Emit one statement; False when it was only a comment."""
    _statement(p, ctx)
    return not p.lines[-1].lstrip(" ").startswith("#")


def _statement(p: Program, ctx: Ctx) -> None:
    simple = ["site", "site", "pass", "assign", "one_liner", "semicolon", "comment", "feed"]
    compound = ["if", "for", "while", "try", "try_star", "with", "match", "def", "class"]
    kind = p.draw(st.sampled_from(simple + (compound if ctx.depth < MAX_DEPTH else [])))
    n = p.uid()
    if kind == "site":
        site_statement(p, ctx)
    elif kind == "pass":
        p.emit(ctx.indent, "pass")
    elif kind == "feed":
        p.lines.append("\x0c" + "    " * ctx.indent + "pass")  # form feed before the indent
    elif kind == "assign":
        p.emit(ctx.indent, f"x{n} = (1 +")
        p.emit(ctx.indent + 1, "2)  # form\x0cfeed")
    elif kind == "comment":
        p.emit(ctx.indent, f"# comment {n}\u2028 with a line separator \x0c and a form feed")
    elif kind == "one_liner":
        line = p.next_line
        site_statement(p, ctx, prefix=f"if c{n}: ", extra=(("if", line, False),))
    elif kind == "semicolon":
        site_statement(p, ctx, prefix=f"x{n} = 1; ")
    elif kind == "if":
        tests = [p.emit(ctx.indent, f"if c{n}:")]
        block(p, ctx.inner(("if", tests[0], False)))
        for j in range(p.draw(st.integers(0, 2))):
            negated = tuple(("if", t, True) for t in tests)
            tests.append(p.emit(ctx.indent, f"elif c{n}_{j}:"))
            block(p, ctx.inner(*negated, ("if", tests[-1], False)))
        if p.draw(st.booleans()):
            p.emit(ctx.indent, "else:")
            block(p, ctx.inner(*(("if", t, True) for t in tests)))
    elif kind in ("for", "while"):
        is_async = kind == "for" and ctx.is_async and p.draw(st.booleans())
        header = (
            f"async for i{n} in items:"
            if is_async
            else (f"for i{n} in items:" if kind == "for" else f"while c{n}:")
        )
        line = p.emit(ctx.indent, header)
        loop = "async for" if is_async else kind
        block(p, ctx.inner((loop, line, False)))
        if p.draw(st.booleans()):
            else_line = p.keyword(ctx.indent, "else:")
            block(p, ctx.inner((f"{kind}-else", else_line, False)))
    elif kind in ("try", "try_star"):
        star = "*" if kind == "try_star" else ""
        line = p.emit(ctx.indent, "try:")
        block(p, ctx.inner(("try", line, False)))
        handlers = p.draw(st.integers(0 if not star else 1, 2))
        for j in range(handlers):
            bare = not star and j == handlers - 1 and p.draw(st.booleans())
            text = "except:" if bare else f"except{star} (K{n}, L{j}) as err{j}:"
            handler = p.emit(ctx.indent, text)
            block(p, ctx.inner((f"except{star}", handler, False)))
        if handlers and p.draw(st.booleans()):
            else_line = p.keyword(ctx.indent, "else:")
            block(p, ctx.inner(("try-else", else_line, False)))
        if not handlers or p.draw(st.booleans()):
            final = p.keyword(ctx.indent, "finally:")
            block(p, ctx.inner(("finally", final, False)))
    elif kind == "with":
        is_async = ctx.is_async and p.draw(st.booleans())
        line = p.emit(ctx.indent, f"{'async ' if is_async else ''}with open(p{n}) as f{n}, lock:")
        block(p, ctx.inner(("async with" if is_async else "with", line, False)))
    elif kind == "match":
        p.emit(ctx.indent, f"match v{n}:")
        cases = p.draw(st.integers(1, 3))
        for j in range(cases):
            pattern = (
                "_"
                if j == cases - 1 and j
                else p.draw(st.sampled_from([f"{j}", f"[a{n}, *_] if a{n}", f'{{"k": w{n}}}']))
            )
            case_line = p.keyword(ctx.indent + 1, f"case {pattern}:")
            inner = ctx.inner(("case", case_line, False))
            block(
                p,
                Ctx(
                    inner.indent + 1,
                    inner.scope,
                    inner.kind,
                    inner.guards,
                    inner.is_async,
                    inner.depth,
                ),
            )
    elif kind == "def":
        is_async = p.draw(st.booleans())
        p.emit(ctx.indent, f"{'async ' if is_async else ''}def f{n}(a, *args):")
        block(p, ctx.child(f"f{n}", "function", is_async))
    elif kind == "class":
        p.emit(ctx.indent, f"class C{n}:")
        block(p, ctx.child(f"C{n}", "class"))


def truth(source: bytes) -> list[tuple[int, str]]:
    """(line, exception) of every site, by the standard library's parser."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assert):
            found.append((node.lineno, "AssertionError"))
        elif isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            found.append((node.lineno, ast.unparse(exc)))
    return sorted(found)


def summary(sites: list[Site] | tuple[Site, ...]) -> list[tuple[int, str | None, str, list[Guard]]]:
    return sorted(
        (s.line, s.exception, s.scope, [(g.kind, g.line, g.negated) for g in s.guards])
        for s in sites
    )


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data(), st.sampled_from(["\n", "\r\n", "\r"]))
def test_generated_programs(data: st.DataObject, newline: str) -> None:
    p = Program(data)
    block(p, Ctx(indent=0, scope="<module>", kind="module"))
    source = (newline.join(p.lines) + newline).encode("utf-8")
    expected = sorted((e.line, e.exception, e.scope, e.guards) for e in p.sites)
    assert truth(source) == [(e[0], e[1]) for e in expected]

    text = decode_source(source)
    by_units = extract_file("gen.py", "0" * 40, source)
    by_module = extract_file("gen.py", "0" * 40, source, partial=False)
    fallback = collect_ast(ast.parse(text.text), path="gen.py", lines=text.lines)
    for result in (by_units, by_module):
        assert result.status == "mined", result.reason
        assert summary(result.sites) == expected
    assert summary(fallback) == expected
    for site in by_module.sites:
        assert "\r" not in site.excerpt.text
        assert site.excerpt.start_line <= site.line <= site.excerpt.end_line

    try:
        module = cst.parse_module(text.text)
    except cst.ParserSyntaxError:
        return  # libcst rejects it (the fallback mined it above)
    whole = sorted(collect(module, path="gen.py", lines=text.lines), key=lambda s: s.line)
    ordered = sorted(fallback, key=lambda s: s.line)
    for a, b in zip(whole, ordered, strict=True):
        left, right = a.to_json(), b.to_json()
        left.pop("parser"), right.pop("parser")
        assert left == right
