"""The calls of a function whose name the commit defines more than once.

The facts list callers by name only for names defined once
(:func:`miner.analysis.callers.find_callers`). A method such as
``forward_compress``, defined by two backends, has calls the name alone
cannot place; a call is one of a definition's only if its arguments can bind
to that definition's parameters (a call that cannot would raise
``TypeError``). :func:`signature_calls` finds, by the bytes, every use of the
name, parses the files that call it and keeps the calls that bind. Nothing
here decides what a value means.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from miner.analysis.code import call_name, comment_start
from miner.analysis.origins.source import Function, Module, Modules

#: Most calls by name looked at (more: the calls are not listed).
MAX_NAMED_CALLS = 12


def binds(function: Function, call: ast.Call) -> bool:
    """Whether ``call``'s arguments can bind to ``function``'s parameters:
    no more positional arguments than it takes (after ``self`` / ``cls`` for
    a call on an object), every keyword one of its names, every parameter
    without a default given. A ``*args`` or ``**kwargs`` in the call can
    bind to anything."""
    if unpacks(call):
        return True
    a = function.node.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    if function.owner is not None and isinstance(call.func, ast.Attribute) and positional:
        if not _static(function):
            positional = positional[1:]
    if len(call.args) > len(positional) and a.vararg is None:
        return False
    given = set(positional[: len(call.args)])
    names = set(positional) | {p.arg for p in a.kwonlyargs}
    for keyword in call.keywords:
        if keyword.arg not in names and a.kwarg is None:
            return False
        given.add(str(keyword.arg))
    required = positional[: len(positional) - len(a.defaults)] if a.defaults else positional
    required += [p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is None]
    return set(required) <= given


def unpacks(call: ast.Call) -> bool:
    """The call passes ``*args`` or ``**kwargs``: any parameter may get a value."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _static(function: Function) -> bool:
    return any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.node.decorator_list
    )


def signature_calls(
    modules: Modules, function: Function, name: str
) -> list[tuple[Module, ast.Call]] | None:
    """Every call of ``name`` in the commit that can bind to ``function``
    (:func:`binds`), with its module, in (path, line) order; None when the
    calls cannot all be known: the name is used other than in a call, a
    ``def`` or a comment (an alias, a string, a table), a file calling it
    does not parse, or it is called more than :data:`MAX_NAMED_CALLS` times."""
    raw = name.encode()
    pattern = re.compile(rb"(?<![\w])" + re.escape(raw) + rb"(?!\w)")
    found: list[tuple[Module, ast.Call]] = []
    named = 0
    for path in sorted(p for p, data in modules.files.items() if raw in data):
        uses = list(_uses(modules.files[path], pattern))
        if "other" in uses:
            return None
        if "call" not in uses:
            continue
        module = modules.get(path)
        if module is None:
            return None
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and call_name(node) == name:
                named += 1
                if binds(function, node):
                    found.append((module, node))
        if named > MAX_NAMED_CALLS:
            return None
    return found


def _uses(data: bytes, pattern: re.Pattern[bytes]) -> Iterator[str]:
    """``call``, ``def`` or ``other`` for each occurrence of the name as a
    word in ``data`` (occurrences in a comment are left out)."""
    for m in pattern.finditer(data):
        start = data.rfind(b"\n", 0, m.start()) + 1
        line = data[start : data.find(b"\n", m.end()) if b"\n" in data[m.end() :] else len(data)]
        text = line.decode("utf-8", "replace")
        at = len(data[start : m.start()].decode("utf-8", "replace"))
        mark = comment_start(text)
        if mark != -1 and mark < at:
            continue
        before = data[start : m.start()].rstrip()
        if before.endswith((b"def", b"class")):
            yield "def"
        elif data[m.end() : m.end() + 1] == b"(":
            yield "call"
        else:
            yield "other"
