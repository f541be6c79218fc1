"""Raising helpers: functions that raise an exception built from their parameters.

SGLang raises some errors through functions such as::

    def raise_error_or_warn(obj, strict, counter_name, message, log_interval=1000):
        if strict:
            raise ValueError(message)
        else:
            ...  # log a warning

The helper's own site (``raise ValueError(message)``) has no template: the
message, and whether it is raised at all, are decided where the helper is
called. Each call of a helper is therefore a site of its own, of kind
``call`` (:class:`~miner.model.Site`): the helper's exception type, the
message rendered from the call's argument (resolved through a local variable
like any message), the guards of the call plus the helper's own conditions
with each parameter replaced by the argument given for it (``if strict:``
becomes the test of the ``strict`` argument at the call).

A function is a *raising helper* (:func:`helper_of`) when one of its sites

* raises a named exception (not a parameter, not a re-raise, no ``from``),
* with a message that is one of the function's parameters, or a template
  with at least one placeholder that is a parameter (``f"{pool} leak! {msg}"``,
  also through a local variable),
* guarded only by tests that are a bare parameter (``if strict:``, either
  branch; earlier ``if not strict: return`` exits alike), and by the
  conditions a helper it calls brings along (helpers nest: a function that
  calls a helper with a message built from its own parameters is a helper
  too),

and none of those parameters is rebound in the function. Only plain
functions and methods qualify (``staticmethod`` / ``classmethod`` allowed,
any other decorator may change the call); nested functions do not.

Which calls are calls of a helper is decided by name, repository-wide, by
:mod:`miner.mining.calls`; this module gives the per-file rules: binding a
call's arguments to the helper's parameters (:meth:`Helper.bind`, the same
for both parsers and the planner), the message (:meth:`Helper.message`) and
the guards (:meth:`Helper.guards`) of the call site.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from miner.extract.template import Message, TemplateBuilder, enter_group
from miner.model import DynamicReason, Guard, MessagePart, MessageStyle, Site

#: How a call names its callee: ``helper(...)`` or ``obj.helper(...)``.
CallForm = Literal["name", "attribute"]
#: The shape of one argument of a call: its keyword (None for a positional
#: argument) and its star (``""``, ``"*"``, ``"**"``).
ArgShape = tuple[str | None, str]
#: Decorators that keep a function callable as written.
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})


@dataclass(frozen=True, slots=True)
class Helper:
    """One raising helper: a site of a function and how its calls bind."""

    name: str
    """The function's name (what calls are matched by)."""
    qualname: str
    path: str
    line: int
    """Line of the helper's own site."""
    exception: str
    parts: tuple[MessagePart, ...]
    """The message; placeholders that are parameters are filled at each call."""
    style: MessageStyle
    positional: tuple[str, ...]
    """Parameters a positional argument binds, in order (a method's ``self``
    or ``cls`` left out)."""
    keywords: tuple[str, ...]
    """Parameters a keyword argument binds."""
    defaults: tuple[tuple[str, str], ...]
    """``(parameter, source of its default)``."""
    varargs: bool
    """The function takes ``*args`` (extra positional arguments are fine)."""
    varkw: bool
    """The function takes ``**kwargs`` (unknown keywords are fine)."""
    method: bool
    """Defined in a class body and bound at a call (not a ``staticmethod``)."""
    conditions: tuple[Guard, ...]
    """What the helper's site needs, in order: guards (and exits as ``if``
    guards) whose test is a bare parameter, mapped at each call, then the
    conditions of the helper it calls, kept as they are."""
    via: tuple[str, ...]
    """``path:line qualname`` of this helper's site, then its own ``via``."""
    forms: tuple[CallForm, ...] = ("name", "attribute")
    """The call forms that name this helper in the file being mined."""
    formats: bool = False
    """Not a function but an exception class that formats its text from the
    arguments of its constructor (:mod:`miner.extract.formats`): ``name`` is
    the class, ``parts`` its text, and a call of it is not a site of its own:
    the ``raise`` of the instance takes the message from it."""

    @property
    def params(self) -> frozenset[str]:
        return frozenset((*self.positional, *self.keywords))

    def to_json(self) -> dict[str, Any]:
        """The helper as JSON (what the blob cache keeps; :meth:`from_json` reads it)."""
        return {
            "name": self.name,
            "qualname": self.qualname,
            "path": self.path,
            "line": self.line,
            "exception": self.exception,
            "parts": [p.to_json() for p in self.parts],
            "style": self.style,
            "positional": list(self.positional),
            "keywords": list(self.keywords),
            "defaults": [list(d) for d in self.defaults],
            "varargs": self.varargs,
            "varkw": self.varkw,
            "method": self.method,
            "conditions": [g.to_json() for g in self.conditions],
            "via": list(self.via),
            "forms": list(self.forms),
            "formats": self.formats,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Helper:
        """Inverse of :meth:`to_json`.

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not a helper's JSON.
        """
        return cls(
            name=str(data["name"]),
            qualname=str(data["qualname"]),
            path=str(data["path"]),
            line=int(data["line"]),
            exception=str(data["exception"]),
            parts=tuple(MessagePart.from_json(p) for p in data["parts"]),
            style=data["style"],
            positional=tuple(map(str, data["positional"])),
            keywords=tuple(map(str, data["keywords"])),
            defaults=tuple((str(k), str(v)) for k, v in data["defaults"]),
            varargs=bool(data["varargs"]),
            varkw=bool(data["varkw"]),
            method=bool(data["method"]),
            conditions=tuple(Guard.from_json(g) for g in data["conditions"]),
            via=tuple(map(str, data["via"])),
            forms=tuple(data["forms"]),
            formats=bool(data.get("formats", False)),
        )

    def needed(self) -> frozenset[str]:
        """The parameters a call must bind (or leave to a default)."""
        names = {p.expr for p in self.parts if p.expr is not None and p.expr in self.params}
        names |= {g.test for g in self.conditions if g.test in self.params}
        return frozenset(names)

    def bind(self, form: CallForm, args: Sequence[ArgShape]) -> dict[str, int] | None:
        """Parameter -> index of the argument that binds it, or None when the
        call does not bind soundly: another call form, ``*args`` / ``**kwargs``
        arguments, too many positional arguments, an unknown keyword, a
        needed parameter bound twice or not at all (and without a default)."""
        if form not in self.forms:
            return None
        bound: dict[str, int] = {}
        position = 0
        for index, (keyword, star) in enumerate(args):
            if star:
                return None
            if keyword is None:
                if position >= len(self.positional):
                    if not self.varargs:
                        return None
                    continue
                bound[self.positional[position]] = index
                position += 1
            elif keyword in self.keywords:
                if keyword in bound:
                    return None
                bound[keyword] = index
            elif not self.varkw:
                return None
        defaults = dict(self.defaults)
        if any(name not in bound and name not in defaults for name in self.needed()):
            return None
        return bound

    def message(
        self,
        argument: Callable[[str], tuple[Message, str] | None],
    ) -> Message:
        """The message at a call; ``argument(param)`` gives the rendered
        argument bound to ``param`` and its source, or None (a default)."""
        defaults = dict(self.defaults)
        builder = TemplateBuilder()
        styles: list[MessageStyle] = []
        sources: list[str] = []
        reasons: list[DynamicReason] = []
        groups: dict[object, int] = {}
        for part in self.parts:
            enter_group(builder, groups, part.optional)
            if part.expr is None:
                builder.text(part.text or "")
                continue
            if part.expr not in self.params:
                builder.field(part.expr, part.conversion, part.spec)
                continue
            given = argument(part.expr)
            if given is None:
                source = defaults[part.expr]
                sources.append(source)
                text = _string_value(source)
                if text is not None and not part.conversion and part.spec is None:
                    builder.text(text)
                else:
                    builder.field(source, part.conversion, part.spec)
                continue
            rendered, source = given
            sources.append(source)
            styles.append(rendered.style)
            if rendered.reason is not None:
                reasons.append(rendered.reason)
            if rendered.kind in ("literal", "template") and not part.conversion and not part.spec:
                builder.extend(TemplateBuilder.of_parts(rendered.parts))
            else:
                builder.field(source, part.conversion, part.spec)
        builder.group = None
        source = sources[0] if len(sources) == 1 else ", ".join(sources)
        if not any(p.expr is None and p.text for p in builder.parts):
            return Message.dynamic(source, reasons[0] if len(reasons) == 1 else "other")
        whole = len(self.parts) == 1 and styles
        return Message.of(builder, styles[0] if whole else self.style, source)

    def guards(self, argument: Callable[[str], str | None], line: int) -> tuple[Guard, ...]:
        """The helper's conditions at a call on ``line``: a test that is a
        parameter becomes the source of the argument bound to it (or of its
        default); the others are kept. All carry the call's line."""
        defaults = dict(self.defaults)
        out = []
        for guard in self.conditions:
            test = guard.test
            if test in self.params:
                given = argument(test)
                test = given if given is not None else defaults[test]
            out.append(Guard(guard.kind, test, guard.negated, line))
        return tuple(out)


def _string_value(source: str) -> str | None:
    """The value of a string literal's source, else None."""
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


#: The helpers a file's calls may name: callee name -> helpers (one per site).
HelperTable = Mapping[str, Sequence[Helper]]


def call_shape(
    func: ast.expr, args: Sequence[ast.expr], keywords: Sequence[ast.keyword]
) -> tuple[str, CallForm, list[ArgShape]] | None:
    """The callee name, form and argument shapes of an ``ast`` call, in
    source order (as the libcst walker sees them); None for another callee."""
    form: CallForm
    if isinstance(func, ast.Name):
        name, form = func.id, "name"
    elif isinstance(func, ast.Attribute):
        name, form = func.attr, "attribute"
    else:
        return None
    items: list[tuple[tuple[int, int], ArgShape]] = []
    for arg in args:
        shape: ArgShape = (None, "*" if isinstance(arg, ast.Starred) else "")
        items.append(((arg.lineno, arg.col_offset), shape))
    for kw in keywords:
        items.append(((kw.lineno, kw.col_offset), (kw.arg, "" if kw.arg else "**")))
    items.sort(key=lambda item: item[0])
    return name, form, [shape for _, shape in items]


def bound_helpers(
    table: HelperTable | None,
    name: str,
    form: CallForm,
    shapes: Sequence[ArgShape],
    *,
    formats: bool = False,
) -> Iterator[tuple[Helper, dict[str, int]]]:
    """The helpers a call binds, with the binding of each: the raising
    helpers, or with ``formats`` the exception classes that format their
    text (:attr:`Helper.formats`)."""
    if not table:
        return
    for helper in table.get(name, ()):
        if helper.formats != formats:
            continue
        bound = helper.bind(form, shapes)
        if bound is not None:
            yield helper, bound


# -- finding helpers -----------------------------------------------------------
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def functions(tree: ast.Module) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """Functions callable by name, by ``__qualname__``: module-level ones and
    methods of (nested) classes, each with whether it is a method bound at a
    call. Functions nested in functions are left out."""
    out: dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]] = {}
    stack: list[tuple[str, ast.AST, bool]] = [("", tree, False)]
    while stack:
        prefix, node, in_class = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTIONS):
                qualname = prefix + child.name
                names = [_last(d) for d in child.decorator_list]
                out.setdefault(qualname, (child, in_class and "staticmethod" not in names))
            elif isinstance(child, ast.ClassDef):
                stack.append((f"{prefix}{child.name}.", child, True))
            elif isinstance(child, (ast.If, ast.Try, *_try_star())) and not in_class:
                stack.append((prefix, child, in_class))
    return out


def _try_star() -> tuple[type, ...]:
    return (ast.TryStar,) if hasattr(ast, "TryStar") else ()


def _last(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def rebound(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names the function's body binds or deletes (any scope inside it)."""
    out: set[str] = set()
    for node in (n for stmt in func.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, ast.arg):
            out.add(node.arg)  # a nested function's or lambda's parameter
        elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            out.add(node.name)
    return out


_BRANCHING = (ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.Match)


def _straight(func: ast.FunctionDef | ast.AsyncFunctionDef, site: Site) -> bool:
    """Whether nothing but ``if`` statements decides if the site is reached:
    no loop, ``try``, ``with`` or ``match`` in the function's own body, no
    ``yield``, and every ``return`` before the site alone in the body of an
    ``if`` (an exit the extractor records, and :func:`helper_of` checks)."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (*_try_star(), *_BRANCHING, ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(node, ast.If):
            for branch in (node.body, node.orelse):
                if len(branch) == 1 and isinstance(branch[0], ast.Return):
                    continue
                stack.extend(branch)
            stack.append(node.test)
            continue
        if isinstance(node, ast.Return) and node.lineno < site.line:
            return False
        stack.extend(ast.iter_child_nodes(node))
    return True


def _parameter_test(guard: Guard, params: set[str]) -> Guard | None:
    """An ``if`` guard (or an ``if`` exit, an earlier ``assert``) whose test
    is a parameter or ``not`` one, as an ``if`` guard on the parameter."""
    if guard.kind not in ("if", "exit", "asserted"):
        return None
    test, negated = guard.test, guard.negated
    if test.startswith("not ") and test[4:].strip() in params:
        test, negated = test[4:].strip(), not negated
    if test not in params:
        return None
    return Guard("if", test, negated, guard.line)


def helper_of(
    site: Site,
    func: ast.FunctionDef | ast.AsyncFunctionDef,
    method: bool,
    carried: int = 0,
) -> Helper | None:
    """The helper a site makes of its function (see the module doc), or None.

    ``carried``: for a ``call`` site, how many of its last guards are the
    conditions of the helper it calls (kept as they are unless a test is a
    parameter)."""
    if site.kind not in ("raise", "call") or site.reraise or site.cause is not None:
        return None
    if site.exception is None or site.abstract or "<locals>" in site.scope:
        return None
    if any(_last(d) not in _PLAIN_DECORATORS for d in func.decorator_list):
        return None
    if func.name.startswith("__") and func.name.endswith("__"):
        return None  # called by Python itself (``obj[key]``, ``obj()``), not by name
    if not _straight(func, site):
        return None
    args = func.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if method and positional:
        positional = positional[1:]
    keywords = [a.arg for a in args.args if a.arg in positional] + [a.arg for a in args.kwonlyargs]
    params = set(positional) | set(keywords)
    if site.exception.split(".")[0].split("(")[0] in params:
        return None
    parts: tuple[MessagePart, ...]
    if site.message_kind == "dynamic" and site.message_source in params:
        parts = (MessagePart(expr=site.message_source),)
    elif site.message_kind == "template" and any(p.expr in params for p in site.message_parts):
        parts = site.message_parts
    else:
        return None
    own = site.guards[: len(site.guards) - carried]
    conditions: list[Guard] = []
    for guard in (*own, *site.exits):
        condition = _parameter_test(guard, params)
        if condition is None:
            return None
        conditions.append(condition)
    conditions.extend(site.guards[len(own) :])
    used = {p.expr for p in parts if p.expr in params} | {g.test for g in conditions}
    if used & rebound(func):
        return None
    all_positional = [*args.posonlyargs, *args.args]
    defaults = {
        a.arg: ast.unparse(d)
        for a, d in zip(
            all_positional[len(all_positional) - len(args.defaults) :], args.defaults, strict=True
        )
    }
    defaults.update(
        {
            a.arg: ast.unparse(d)
            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            if d is not None
        }
    )
    return Helper(
        name=func.name,
        qualname=site.scope,
        path=site.path,
        line=site.line,
        exception=site.exception,
        parts=parts,
        style=site.message_style,
        positional=tuple(positional),
        keywords=tuple(keywords),
        defaults=tuple(sorted((k, v) for k, v in defaults.items() if k in params)),
        varargs=args.vararg is not None,
        varkw=args.kwarg is not None,
        method=method,
        conditions=tuple(conditions),
        via=(f"{site.path}:{site.line} {site.scope}", *site.via),
    )


def _bare_test(guard: Guard, kinds: tuple[str, ...]) -> bool:
    test = guard.test[4:] if guard.test.startswith("not ") else guard.test
    return guard.kind in kinds and test.isidentifier()


def maybe_helper(site: Site) -> bool:
    """A cheap test before :func:`helper_of` (which needs the function's
    definition): could this site make its function a helper? A message that
    is, or holds, a bare name; guards and exits that test a bare name (a
    ``call`` site's last guards are its helper's conditions: not checked)."""
    if site.kind not in ("raise", "call") or site.reraise or site.exception is None:
        return False
    if site.scope == "<module>" or "<locals>" in site.scope or site.cause is not None:
        return False
    if site.kind == "raise" and not all(_bare_test(g, ("if",)) for g in site.guards):
        return False
    if not all(_bare_test(g, ("exit", "asserted")) for g in site.exits):
        return False
    if site.message_kind == "dynamic":
        return bool(site.message_source) and str(site.message_source).isidentifier()
    return site.message_kind == "template" and any(
        p.expr is not None and p.expr.isidentifier() for p in site.message_parts
    )
