"""The configuration model of one commit: flags, settings, derived settings, environment variables.

How it is found (all with the stdlib ``ast``, parsing only files a byte search
picks):

* **argparse flags**: every ``<x>.add_argument("--flag", ...)`` call with
  literal option strings (files containing ``add_argument``): ``dest`` (given, or
  from the first long flag), ``type``, ``default``, ``choices`` (literals, or a
  module-level list/tuple named in the same file, ``["auto"] + NAME`` too),
  ``help``, ``action``; an alias that points to a new flag (``new_flag=``, or help
  text "Deprecated ... use --x") is recorded as ``deprecated_for``.
* **arguments dataclasses**: a ``@dataclass`` class that the code turns into
  flags: one of its methods calls ``add_argument`` or hands the class to a helper
  (``add_cli_args_from_dataclass(parser, ServerArgs)``), or an ``add_argument``
  takes ``default=Cls.field``. Every field is a *setting*; it has the flag
  ``--field-name`` when its annotation carries help (``Annotated[T, "help"]`` or
  ``Annotated[T, Arg(help=..., choices=...)]``, ``no_cli`` excluded), when its
  ``field(metadata={"help": ...})`` has help, or when a method loops over
  ``fields(...)`` calling ``add_argument`` (then every field); an explicit
  ``add_argument`` whose dest is the field wins. ``Literal[...]`` gives choices.
* **derived settings**: a method or property of an arguments class whose body
  returns a boolean expression over fields, directly or through a small
  predicate function it delegates to (``return f(self)`` -> ``def f(cfg):
  return cfg.a is False and cfg.b in ("x", "y")``), followed up to
  :data:`MAX_DEPTH` levels; the result is the conditions that make it true.
* **environment variables**: ``os.environ[...]``, ``os.environ.get``,
  ``os.getenv``, ``"X" in os.environ``, ``setdefault``, helper readers (any call
  named like ``get_*env*`` / ``*_env_var`` with a literal name), and registries of
  declared variables: class attributes ``NAME = EnvKind(default, ...)`` whose
  callee's name starts with ``Env`` (SGLang's ``Envs``: ``SGLANG_X = EnvBool(False)``).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from miner.analysis.code import (
    SourceIndex,
    call_name,
    dotted,
    literal_text,
    parse_expr,
    unparse,
    walk,
)
from miner.analysis.places import path_kind
from miner.extract.ast_fallback import names_bound

#: How many delegation levels a derived setting is followed through.
MAX_DEPTH = 4

#: argparse actions whose flag takes no value (:attr:`Option.switch`).
_SWITCH_ACTIONS = ("store_true", "store_false", "store_const", "BooleanOptionalAction")
#: Values as a switch stores them (``None``: not set).
_TRUTH: dict[str, bool | str | None] = {
    "true": True,
    "1": True,
    "false": False,
    "0": False,
    "none": None,
}

Op = Literal["truthy", "falsy", "==", "!=", "in", "not in", "is None", "is not None", "compare"]

_NEGATE: dict[str, str] = {
    "truthy": "falsy",
    "falsy": "truthy",
    "==": "!=",
    "!=": "==",
    "in": "not in",
    "not in": "in",
    "is None": "is not None",
    "is not None": "is None",
}


@dataclass(frozen=True, slots=True)
class Condition:
    """One comparison of a setting (or variable) with values: ``name op values``.

    ``op`` ``compare`` keeps any other comparison as written in ``text``.
    """

    name: str
    """The setting's field name or the environment variable's name."""
    op: str
    values: tuple[str, ...] = ()
    """Literal values as display text (strings as they are)."""
    text: str = ""
    """The source text this condition was read from."""
    env: bool = False
    """True when ``name`` is an environment variable."""

    def negated(self) -> Condition:
        op = _NEGATE.get(self.op)
        if op is None:
            return Condition(self.name, "compare", self.values, f"not ({self.text})", self.env)
        return Condition(self.name, op, self.values, self.text, self.env)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "op": self.op, "values": list(self.values)}
        if self.text:
            out["text"] = self.text
        if self.env:
            out["env"] = True
        return out


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: an argparse flag, a field of an arguments dataclass, or both."""

    name: str
    """The attribute the value lands in (argparse ``dest`` / the field name)."""
    flags: tuple[str, ...]
    """Option strings, canonical first (``--mamba-radix-cache-strategy``); empty
    for a field with no command-line flag."""
    owner: str
    """The arguments class (``ServerArgs``) or the function holding the
    ``add_argument`` call (``main``)."""
    path: str
    line: int
    source: Literal["argparse", "dataclass"]
    type: str | None = None
    default: str | None = None
    """Source text of the default (``None``, ``'auto'``, ``False``)."""
    choices: tuple[str, ...] | None = None
    help: str | None = None
    action: str | None = None
    deprecated_for: str | None = None
    """For an alias kept for compatibility: the flag that replaces it."""
    namespace: str | None = None
    """A namespace marker of the field (SGLang's ``NS("disagg")``), if any."""
    module: str | None = None
    """Dotted module of ``path`` (for ``python -m``)."""

    @property
    def flag(self) -> str | None:
        return self.flags[0] if self.flags else None

    @property
    def is_bool(self) -> bool:
        """A switch that giving the flag turns on: ``store_true``, a ``bool``
        type, or an untyped flag of a custom action whose default is
        ``False`` (SGLang's diffusion ``action=StoreBoolean,
        default=False``: ``--enable-torch-compile`` alone is true). With the
        default ``True`` such a flag is turned off by a value
        (``--vae-tiling false``): not a switch."""
        action = self.action or ""
        if action.endswith("store_true") or self.type == "bool" or self.negation:
            return True
        return (
            self.type is None
            and self.choices is None
            and self.default == "False"
            and not action.endswith(("store_false", "store_const", "count", "append"))
        )

    @property
    def negation(self) -> str | None:
        """The off switch of an ``argparse.BooleanOptionalAction`` flag
        (``--no-x`` for ``--x``: argparse adds it), else None. Such a flag
        takes no value: ``--x`` turns it on, ``--no-x`` off."""
        flag = self.flag
        if not (self.action or "").endswith("BooleanOptionalAction") or flag is None:
            return None
        return "--no-" + flag[2:] if flag.startswith("--") else None

    @property
    def switch(self) -> bool:
        """The flag takes no value: ``store_true``, ``store_false``,
        ``store_const`` or ``argparse.BooleanOptionalAction``. On a command
        line it is ``--x`` (or, for the last, ``--no-x``), never ``--x VALUE``."""
        return (self.action or "").endswith(_SWITCH_ACTIONS)

    def given(self, value: str) -> str | None:
        """The command-line words that give the option ``value``: the flag and
        the value for a flag that takes one; for a :attr:`switch`, the flag or
        its ``--no-x`` alone, ``""`` when leaving the flag out gives ``value``,
        None when no command line does. A value a switch cannot name
        (``VALUE``, ``auto``) is the flag given. None for an option without a flag."""
        flag = self.flag
        if flag is None:
            return None
        if not self.switch:
            return f"{flag} {value}"
        truth = _TRUTH.get(value.lower(), "given")
        action = self.action or ""
        if truth == "given":
            return flag
        if action.endswith("BooleanOptionalAction"):
            if truth is not None:
                return flag if truth else self.negation
        elif action.endswith(("store_true", "store_false")) and truth is action.endswith(
            "store_true"
        ):
            return flag
        left_out: bool | str | None
        if self.default is None:  # argparse's default of a switch
            left_out = None if action.endswith("Action") else action.endswith("store_false")
        else:
            left_out = _TRUTH.get(self.default.lower(), "other")
        return "" if left_out is truth else None

    def defined_near(self, path: str) -> bool:
        """Whether the file ``path`` is in the package part that defines this
        option: the folder of the module's first two names (``python/sglang/srt/``
        for ``sglang.srt.server_args``), or of the top package for a module
        right in it (``python/sglang/`` for ``sglang.profiler``); any file when
        the module is not known. Code of the diffusion
        server (``sglang.multimodal_gen``) is not near ``sglang.srt``'s
        ``ServerArgs``, which has options of the same names."""
        if path == self.path or not self.module:
            return True  # no module: the part is not known
        names = min(2, self.module.count("."))
        part = _package_folder(self.path, self.module, names) if names else None
        return part is None or path.startswith(part)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "flags": list(self.flags),
            "owner": self.owner,
            "path": self.path,
            "line": self.line,
            "source": self.source,
            "type": self.type,
            "default": self.default,
            "choices": None if self.choices is None else list(self.choices),
            "help": self.help,
            "action": self.action,
            "deprecated_for": self.deprecated_for,
            "namespace": self.namespace,
            "module": self.module,
        }


def _package_folder(path: str, module: str | None, names: int) -> str | None:
    """The folder of the first ``names`` names of ``module``, the dotted module
    of the file ``path`` (``python/sglang/`` for 1, ``python/sglang/srt/`` for 2
    of ``sglang.srt.server_args``), with its ``/``; None when the module has no
    more names than that or does not fit the path."""
    dotted = (module or "").split(".")
    if not module or len(dotted) <= names:
        return None
    folders = path.split("/")
    root = len(folders) - len(dotted) - (1 if folders[-1] == "__init__.py" else 0)
    if root < 0:
        return None
    return "/".join(folders[: root + names]) + "/"


@dataclass(frozen=True, slots=True)
class Derived:
    """A derived setting: true exactly when ``conditions`` hold (``mode`` all or any)."""

    name: str
    owner: str
    """The arguments class, or ``""`` for a module-level predicate function."""
    path: str
    line: int
    expression: str
    """The boolean expression it reduces to, as written in the innermost body."""
    conditions: tuple[Condition, ...]
    mode: Literal["all", "any"] = "all"
    via: tuple[str, ...] = ()
    """The delegation chain, outermost first (``ServerArgs.enable_mamba_extra_buffer``,
    ``mamba_extra_buffer_of``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "owner": self.owner,
            "path": self.path,
            "line": self.line,
            "expression": self.expression,
            "mode": self.mode,
            "conditions": [c.to_json() for c in self.conditions],
            "via": list(self.via),
        }


@dataclass(frozen=True, slots=True)
class EnvVar:
    """One environment variable the code reads (or declares in a registry)."""

    name: str
    kind: str | None = None
    """``bool``, ``int``, ``str``... from a registry or a typed reader, else None."""
    default: str | None = None
    """Source text of the default, when one is given."""
    path: str = ""
    line: int = 0
    """Where it is declared (registry) or first read."""
    reads: int = 0
    """How many read sites were found."""
    deprecated_for: str | None = None
    """For a deprecated name: the variable that replaces it."""
    registry: str | None = None
    """The registry class declaring it (``Envs``), if any."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "default": self.default,
            "path": self.path,
            "line": self.line,
            "reads": self.reads,
            "deprecated_for": self.deprecated_for,
            "registry": self.registry,
        }


@dataclass(frozen=True, slots=True)
class ConfigModel:
    """Everything configurable at one commit, with lookups by name."""

    options: tuple[Option, ...] = ()
    derived: tuple[Derived, ...] = ()
    env: tuple[EnvVar, ...] = ()
    classes: tuple[str, ...] = ()
    """Arguments classes, largest first (``ServerArgs``)."""
    accessors: tuple[tuple[str, str], ...] = ()
    """Calls that return the arguments object or one of its namespaces:
    (call name, namespace) with ``""`` for the whole object."""
    entry_point: str | None = None
    """``python -m <module>`` that parses the primary arguments class, if found."""
    entry_points: tuple[tuple[str, str, str], ...] = ()
    """(class, path, module) for the other arguments classes whose command was
    found: ``python -m <module>`` parses that class (a second ``ServerArgs`` of
    another file, such as a diffusion server's)."""
    scripts: tuple[str, ...] = ()
    """The files, among those that define flags, that run as a command
    (``python -m <module>``): the file tests ``__name__ == "__main__"`` or is a
    package's ``__main__.py``. A flag of another module is parsed by a
    command that was not found (a subcommand's parser, such as ``sglang
    generate``'s), so no command line is written for it."""
    views: tuple[tuple[str, int, int, tuple[str, ...]], ...] = ()
    """(path, first line, last line, names): the local names that, in the
    function on those lines, only ever hold a view of the arguments object
    (:func:`argument_views`), so that ``cfg.tp_size`` after ``cfg =
    resolving_view(server_args)`` reads the setting ``tp_size``."""
    _by_name: dict[str, tuple[Option, ...]] = field(default_factory=dict, compare=False, repr=False)
    _derived_by_name: dict[str, tuple[Derived, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _env_by_name: dict[str, EnvVar] = field(default_factory=dict, compare=False, repr=False)
    _primary_path: list[str] = field(default_factory=list, compare=False, repr=False)
    _top: list[str] = field(default_factory=list, compare=False, repr=False)
    """The folder of the primary class's top package (``python/sglang/``)."""
    _views: dict[str, list[tuple[int, int, frozenset[str]]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        by_name: dict[str, list[Option]] = defaultdict(list)
        rank = {c: i for i, c in enumerate(self.classes)}
        # Two classes may share a name (two ``ServerArgs``): the file holding
        # most options of the primary class comes first.
        sizes: dict[str, int] = defaultdict(int)
        for opt in self.options:
            by_name[opt.name].append(opt)
            if self.classes and opt.owner == self.classes[0]:
                sizes[opt.path] += 1
        main = max(sorted(sizes), key=lambda p: sizes[p]) if sizes else None
        if main is not None:
            self._primary_path.append(main)
            module = next((o.module for o in self.options if o.path == main and o.module), None)
            top = _package_folder(main, module, 1)
            if top is not None:
                self._top.append(top)
        for name, opts in by_name.items():
            opts.sort(
                key=lambda o: (
                    o.deprecated_for is not None,
                    rank.get(o.owner, len(rank)),
                    o.path != main,
                    not o.flags,
                    o.path,
                    o.line,
                )
            )
            self._by_name[name] = tuple(opts)
        derived: dict[str, list[Derived]] = defaultdict(list)
        for d in self.derived:
            derived[d.name].append(d)
        for name, ds in derived.items():
            ds.sort(key=lambda d: (rank.get(d.owner, len(rank)), d.path, d.line))
            self._derived_by_name[name] = tuple(ds)
        self._env_by_name.update((e.name, e) for e in self.env)
        for path, first, last, names in self.views:
            self._views.setdefault(path, []).append((first, last, frozenset(names)))

    def views_in(self, path: str | None, line: int) -> frozenset[str]:
        """The names that hold a view of the arguments object in the function
        of the file ``path`` around ``line`` (:attr:`views`); empty for None
        or a line outside them."""
        for first, last, names in self._views.get(path or "", ()):
            if first <= line <= last:
                return names
        return frozenset()

    @property
    def primary(self) -> str | None:
        return self.classes[0] if self.classes else None

    @property
    def primary_path(self) -> str | None:
        """The file holding most options of the primary class."""
        return self._primary_path[0] if self._primary_path else None

    def top_level(self, path: str) -> bool:
        """Whether the file ``path`` is a module right in the top package of
        the primary class (``python/sglang/launch_server.py`` for
        ``sglang.srt.server_args``): in no package part, it may name the
        primary class's settings (:meth:`Option.defined_near`)."""
        top = self._top[0] if self._top else None
        return top is not None and path.startswith(top) and "/" not in path[len(top) :]

    def is_primary(self, opt: Option) -> bool:
        """Whether ``opt`` is a field of the primary class in its main file."""
        return opt.owner == self.primary and opt.path == self.primary_path

    def near(self, opt: Option, path: str) -> bool:
        """Whether code of the file ``path`` may be about ``opt`` when it only
        has its name: ``path`` is in the option's package part
        (:meth:`Option.defined_near`), or right in the top package and
        ``opt`` is the primary class's (:meth:`top_level`)."""
        return opt.defined_near(path) or self.top_level(path) and self.is_primary(opt)

    def command_of(self, opt: Option) -> str | None:
        """The module whose ``python -m`` parses ``opt``: the entry point for the
        primary class, the class's own for another, else None (not found)."""
        if opt.owner == self.primary and opt.path in (self.primary_path, None):
            return self.entry_point
        for cls, path, module in self.entry_points:
            if (cls, path) == (opt.owner, opt.path):
                return module
        return None

    def option(self, name: str, near: str | None = None) -> Option | None:
        """The best option storing ``name`` (primary class first, aliases last);
        with ``near`` (a file of the repository), the best one defined in the
        package part of that file first (:meth:`Option.defined_near`)."""
        opts = self._by_name.get(name)
        if not opts:
            return None
        if near is not None:
            for opt in opts:
                if opt.defined_near(near):
                    return opt
        return opts[0]

    def option_in(self, name: str, path: str | None) -> Option | None:
        """The best option storing ``name`` defined in the file ``path`` (a
        :class:`~miner.analysis.links.Read`'s ``option_path``); the best one
        anywhere when ``path`` is None or defines none."""
        opts = self._by_name.get(name, ())
        for opt in opts:
            if opt.path == path:
                return opt
        return opts[0] if opts else None

    def options_named(self, name: str) -> tuple[Option, ...]:
        return self._by_name.get(name, ())

    def derived_setting(self, name: str) -> Derived | None:
        ds = self._derived_by_name.get(name)
        return ds[0] if ds else None

    def env_var(self, name: str) -> EnvVar | None:
        return self._env_by_name.get(name)

    def flag_names(self) -> frozenset[str]:
        """Every flag the command lines accept: each option's flags, and the
        ``--no-x`` that argparse adds for a ``BooleanOptionalAction``."""
        flags = {f for o in self.options for f in o.flags}
        return frozenset(flags | {o.negation for o in self.options if o.negation})

    def aliases_of(self, name: str) -> tuple[str, ...]:
        """Deprecated alias flags that store into ``name``."""
        return tuple(f for o in self._by_name.get(name, ()) if o.deprecated_for for f in o.flags)

    def to_json(self) -> dict[str, Any]:
        return {
            "classes": list(self.classes),
            "entry_point": self.entry_point,
            "entry_points": [{"class": c, "path": p, "module": m} for c, p, m in self.entry_points],
            "scripts": list(self.scripts),
            "accessors": [{"call": c, "namespace": ns} for c, ns in self.accessors],
            "views": [
                {"path": p, "start": first, "end": last, "names": list(names)}
                for p, first, last, names in self.views
            ],
            "options": [o.to_json() for o in self.options],
            "derived": [d.to_json() for d in self.derived],
            "env": [e.to_json() for e in self.env],
        }


# --------------------------------------------------------------------------- argparse


def _kw(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg}


def _text(node: ast.AST | None) -> str | None:
    """A string literal's value (implicit concatenation and ``(... )`` included),
    an f-string's source, else None."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return " ".join(node.value.split())
    if isinstance(node, ast.JoinedStr):
        return unparse(node)
    return None


def _module_lists(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = [...]`` / ``(...)`` / ``{...}`` assignments."""
    out: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            out[target.id] = value
    return out


def _choices(node: ast.AST | None, lists: dict[str, ast.expr]) -> tuple[str, ...] | None:
    """Literal choices of ``node``: a list/tuple/set literal, a module-level list
    by name, ``list(NAME)``, or ``+`` of those; None when not literal."""
    if node is None:
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = [literal_text(e) for e in node.elts]
        if any(v is None for v in values):
            return None
        return tuple(v for v in values if v is not None)
    if isinstance(node, ast.Name) and node.id in lists:
        return _choices(lists[node.id], {})
    if (
        isinstance(node, ast.Call)
        and call_name(node) in ("list", "tuple", "set", "sorted")
        and len(node.args) == 1
    ):
        return _choices(node.args[0], lists)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _choices(node.left, lists), _choices(node.right, lists)
        if left is not None and right is not None:
            return left + right
    return None


def _grown_choices(
    node: ast.AST | None,
    lists: dict[str, ast.expr],
    local: dict[str, ast.expr | None],
    tree: ast.Module,
) -> tuple[str, ...] | None:
    """Choices given as a local bound once to literal choices, with every
    literal its function adds to it: ``choices = set(SAMPLING_BACKEND_CHOICES)``,
    then ``if envs.X.get(): choices.add("token_oracle")`` (SGLang's
    ``ServerArgs.add_cli_args``). An added value counts under any condition
    (a choice the flag may have). None when ``node`` is no such local, or
    the function changes it otherwise (``.remove``, ``.discard``, ``|=``)."""
    if not isinstance(node, ast.Name) or local.get(node.id) is None:
        return None
    found = _choices(local[node.id], lists)
    func = max(
        (
            n
            for n in walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.lineno <= node.lineno <= (n.end_lineno or 0)
        ),
        key=lambda n: n.lineno,
        default=None,
    )
    if found is None or func is None:
        return None
    added: list[str] = []
    for call in walk(func):
        if isinstance(call, ast.AugAssign) and unparse(call.target) == node.id:
            return None
        if not isinstance(call, ast.Call):
            continue
        method = call.func
        if not (isinstance(method, ast.Attribute) and unparse(method.value) == node.id):
            continue
        value = literal_text(call.args[0]) if len(call.args) == 1 else None
        if method.attr not in ("add", "append") or value is None:
            return None
        added.append(value)
    return tuple(dict.fromkeys((*found, *added)))


_DEPRECATED_HELP = re.compile(r"deprecat\w*.*?(?:use|alias (?:for|of))\s+`?(--[\w-]+)", re.I | re.S)


def _enclosing(tree: ast.Module) -> dict[int, str]:
    """id(node) -> qualname of the function/class holding it (only calls)."""
    owners: dict[int, str] = {}

    def visit(node: ast.AST, qual: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{qual}.{child.name}" if qual else child.name)
            else:
                if isinstance(child, ast.Call):
                    owners[id(child)] = qual
                visit(child, qual)

    visit(tree, "")
    return owners


_UNKNOWN = object()


def _evaluate(node: ast.AST | None, env: Mapping[str, str]) -> Any:
    """The value of a small string expression with ``env``'s names bound, or
    ``_UNKNOWN``: literals, names of ``env``, f-strings, ``.strip()`` /
    ``.replace(a, b)`` / ``.lower()`` on strings, ``==`` / ``!=``, ``not``,
    ``and`` / ``or``, and ``a if t else b``. Nothing is executed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bool)):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, _UNKNOWN)
    if isinstance(node, ast.JoinedStr):
        return _evaluate_fstring(node, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        return _evaluate_method(node, node.func, env)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = _evaluate(node.left, env), _evaluate(node.comparators[0], env)
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        if isinstance(node.ops[0], ast.Eq):
            return left == right
        return left != right if isinstance(node.ops[0], ast.NotEq) else _UNKNOWN
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        got = _evaluate(node.operand, env)
        return _UNKNOWN if got is _UNKNOWN else not got
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(v, env) for v in node.values]
        if any(v is _UNKNOWN for v in values):
            return _UNKNOWN
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.IfExp):
        test = _evaluate(node.test, env)
        return _UNKNOWN if test is _UNKNOWN else _evaluate(node.body if test else node.orelse, env)
    return _UNKNOWN


def _evaluate_fstring(node: ast.JoinedStr, env: Mapping[str, str]) -> Any:
    """An f-string's text (:func:`_evaluate`), ``_UNKNOWN`` when a field has a
    format spec or conversion or is not a known string."""
    parts = []
    for value in node.values:
        inner: ast.AST = value
        if isinstance(value, ast.FormattedValue):
            if value.format_spec or value.conversion > 0:
                return _UNKNOWN
            inner = value.value
        got = _evaluate(inner, env)
        if not isinstance(got, str):
            return _UNKNOWN
        parts.append(got)
    return "".join(parts)


def _evaluate_method(node: ast.Call, func: ast.Attribute, env: Mapping[str, str]) -> Any:
    """``s.strip()`` / ``.lower()`` / ``.upper()`` / ``.replace(a, b)`` on a
    known string (:func:`_evaluate`), else ``_UNKNOWN``."""
    target = _evaluate(func.value, env)
    args = [_evaluate(a, env) for a in node.args]
    if not isinstance(target, str) or not all(isinstance(a, str) for a in args):
        return _UNKNOWN
    if func.attr in ("strip", "lower", "upper") and not args:
        return getattr(target, func.attr)()
    if func.attr == "replace" and len(args) == 2:
        return target.replace(args[0], args[1])
    return _UNKNOWN


def _call_lines(tree: ast.Module, name: str = "add_argument") -> list[int]:
    """The lines (sorted) of the calls of ``name`` in ``tree``."""
    return sorted(
        node.lineno for node in walk(tree) if isinstance(node, ast.Call) and call_name(node) == name
    )


def _may_hold(func: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[int]) -> bool:
    """Whether a line of ``lines`` (sorted) is in ``func``'s text, its
    decorators included: else no node under it is on one of them."""
    first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
    i = bisect.bisect_left(lines, first)
    return i < len(lines) and lines[i] <= (func.end_lineno or func.lineno)


def _default_strings(tree: ast.Module, lines: list[int]) -> dict[int, dict[str, str]]:
    """id(call) -> the string names of its function with the defaults applied.

    A method such as ``add_cli_args(parser, prefix: str = "")`` builds its
    option strings from ``prefix`` (``f"--{prefix_with_dot}vae-tiling"``,
    with ``prefix_with_dot = f"{prefix}." if prefix.strip() != "" else ""``):
    called with the default, as the main parser does, they read
    ``--vae-tiling``. Parameters with a string default and the function's
    top-level assignments that evaluate from them (:func:`_evaluate`) are bound.
    Only the functions whose text holds one of ``lines`` (the calls read
    after, :func:`_call_lines`) are read.
    """
    found: dict[int, dict[str, str]] = {}
    for func in walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not _may_hold(func, lines):
            continue
        args = func.args.posonlyargs + func.args.args
        env: dict[str, str] = {}
        defaults: list[ast.expr | None] = list(func.args.defaults)
        pairs = [
            *zip(args[len(args) - len(defaults) :], defaults, strict=True),
            *zip(func.args.kwonlyargs, func.args.kw_defaults, strict=True),
        ]
        for arg, default in pairs:
            if isinstance(default, ast.Constant) and isinstance(default.value, str):
                env[arg.arg] = default.value
        if not env:
            continue
        for stmt in func.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                value = _evaluate(stmt.value, env)
                if isinstance(value, str):
                    env[stmt.targets[0].id] = value
                else:
                    env.pop(stmt.targets[0].id, None)
        for node in walk(func):
            if isinstance(node, ast.Call):
                found.setdefault(id(node), dict(env))
    return found


def _function_locals(tree: ast.Module, lines: list[int]) -> dict[int, dict[str, ast.expr | None]]:
    """id(call) -> the local names of its innermost function: the value of a
    name bound once, by a plain assignment among the function's top-level
    statements; None for any other local (bound twice, in a branch, a loop, a
    ``with`` or as a parameter).

    ``role_default = cls.disagg_role.value if isinstance(...) else
    cls.disagg_role`` before ``add_argument("--disagg-role",
    default=role_default)`` (multimodal_gen's ``server_args/disagg.py``): the
    flag's default is that expression, not a value called ``role_default``.
    Only the functions whose text holds one of ``lines`` (the calls read
    after, :func:`_call_lines`) are read.
    """
    found: dict[int, dict[str, ast.expr | None]] = {}
    functions = [
        n
        for n in walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _may_hold(n, lines)
    ]
    for func in functions:
        local: dict[str, ast.expr | None] = {
            a.arg: None
            for a in (
                *func.args.posonlyargs,
                *func.args.args,
                *func.args.kwonlyargs,
                *filter(None, (func.args.vararg, func.args.kwarg)),
            )
        }
        top = {
            id(stmt.targets[0]): stmt.value
            for stmt in func.body
            if isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        }
        for node in walk(func):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                once = node.id not in local and id(node) in top
                local[node.id] = top[id(node)] if once else None
        for node in walk(func):
            if isinstance(node, ast.Call):
                found[id(node)] = local
    return found


def _wraps_add_argument(tree: ast.Module) -> tuple[bool, bool]:
    """Whether the module defines a function ``add_argument`` that hands its
    arguments on to a parser's ``add_argument``, so that its bare calls are
    flags too (multimodal_gen's ``SamplingParams.add_cli_args``: ``def
    add_argument(*name_or_flags, **kwargs): kwargs.setdefault("default",
    argparse.SUPPRESS); return parser.add_argument(*name_or_flags,
    **kwargs)``); and whether it makes their default ``argparse.SUPPRESS``
    (the namespace then has no attribute for a flag not given)."""
    for node in walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name == "add_argument"
        ):
            calls = [n for n in walk(node) if isinstance(n, ast.Call)]
            if any(
                isinstance(c.func, ast.Attribute)
                and c.func.attr == "add_argument"
                and any(isinstance(a, ast.Starred) for a in c.args)
                for c in calls
            ):
                suppressed = any(
                    call_name(c) == "setdefault"
                    and len(c.args) == 2
                    and literal_text(c.args[0]) == "default"
                    and unparse(c.args[1]) in ("argparse.SUPPRESS", "SUPPRESS")
                    for c in calls
                )
                return True, suppressed
    return False, False


def _dest(kw: Mapping[str, ast.expr], env: Mapping[str, str], flags: list[str]) -> str:
    """The attribute an ``add_argument`` stores into: its ``dest=`` (a
    literal, or a string it evaluates to), else its first flag (``flags``,
    long ones first) as an identifier."""
    dest = literal_text(kw["dest"]) if "dest" in kw else None
    if dest is None and "dest" in kw:
        value = _evaluate(kw["dest"], env)
        dest = value if isinstance(value, str) and value.isidentifier() else None
    return dest if dest is not None else flags[0].lstrip("-").replace("-", "_")


def _new_flag(kw: Mapping[str, ast.expr], help_text: str | None, flags: list[str]) -> str | None:
    """The flag that replaces a deprecated one: its ``new_flag=``, else the
    one its help names as deprecated for (without ``=value``); None otherwise."""
    new_flag = _text(kw.get("new_flag"))
    if new_flag is None and help_text:
        match = _DEPRECATED_HELP.search(help_text)
        if match and match.group(1) not in flags:
            new_flag = match.group(1)
    return new_flag.split("=", 1)[0] if new_flag is not None else None


def _argument_default(
    kw: Mapping[str, ast.expr], local: Mapping[str, ast.expr | None]
) -> str | None:
    """The ``default=`` of an ``add_argument`` as written; for a local
    (``local``: its function's one-value locals), that value when it is a
    constant or a field (``cls.x``), else None (computed there, not known)."""
    given = kw.get("default")
    if isinstance(given, ast.Name) and given.id in local:
        value = local[given.id]
        simple = isinstance(value, ast.Constant) or (
            isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
        )
        return unparse(value) if simple else None
    return unparse(given)


def argparse_options(path: str, tree: ast.Module) -> list[Option]:
    """The options the ``add_argument`` calls of one module (``path``, its
    ``tree``) declare, in the order of the calls: what :func:`mine_config`
    reads from each file holding ``add_argument`` (one file alone)."""
    lists = _module_lists(tree)
    owners = _enclosing(tree)
    lines = _call_lines(tree)
    strings = _default_strings(tree, lines)
    local_values = _function_locals(tree, lines)
    wrapped, suppressed = _wraps_add_argument(tree)
    out: list[Option] = []
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and call_name(node) == "add_argument"):
            continue
        bare = not isinstance(node.func, ast.Attribute)
        if bare and not wrapped:
            continue
        env = strings.get(id(node), {})
        flags = [v for v in (_evaluate(a, env) for a in node.args) if isinstance(v, str) and v]
        if not flags or len(flags) != len(node.args) or not flags[0].startswith("-"):
            continue
        kw = _kw(node)
        long_flags = [f for f in flags if f.startswith("--")]
        dest = _dest(kw, env, long_flags or flags)
        help_text = _text(kw.get("help"))
        if help_text == "==SUPPRESS==" or (
            isinstance(kw.get("help"), ast.Attribute)
            and unparse(kw.get("help")) == "argparse.SUPPRESS"
        ):
            help_text = None
        new_flag = _new_flag(kw, help_text, flags)
        owner = owners.get(id(node), "") or "<module>"
        default = _argument_default(kw, local_values.get(id(node), {}))
        if bare and suppressed and "default" not in kw and "." in owner:
            # argparse.SUPPRESS: the attribute keeps the class field's default
            # (read by _class_default, as for ``default=Cls.field``; a field
            # only a subclass declares has no default known here: None)
            default = _SUPPRESSED + f"{owner.split('.', 1)[0]}.{dest}"
        out.append(
            Option(
                name=dest,
                flags=tuple(long_flags + [f for f in flags if f not in long_flags]),
                owner=owner.split(".", 1)[0] if "." in owner else owner,
                path=path,
                line=node.lineno,
                source="argparse",
                type=unparse(kw.get("type")),
                default=default,
                choices=_choices(kw.get("choices"), lists)
                or _grown_choices(kw.get("choices"), lists, local_values.get(id(node), {}), tree),
                help=help_text,
                action=_literal_or_text(kw.get("action")),
                deprecated_for=new_flag,
            )
        )
    return out


# --------------------------------------------------------------------------- dataclasses


def _is_dataclass(cls: ast.ClassDef) -> bool:
    for deco in cls.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = dotted(target)
        if name and name.split(".")[-1] == "dataclass":
            return True
    return False


def _annotated_aliases(tree: ast.Module) -> set[str]:
    """Names bound to ``Annotated`` in the module (``A = Annotated``, imports as)."""
    names = {"Annotated"}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and dotted(stmt.value) in ("Annotated", "typing.Annotated")
        ):
            names.add(stmt.targets[0].id)
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if alias.name in ("A", "Annotated") and alias.asname is None:
                    names.add(alias.name)
                if alias.name == "Annotated" and alias.asname:
                    names.add(alias.asname)
    return names


@dataclass
class _Field:
    name: str
    line: int
    type: str | None
    default: str | None
    help: str | None = None
    has_meta: bool = False
    no_cli: bool = False
    choices: tuple[str, ...] | None = None
    flags: tuple[str, ...] = ()
    action: str | None = None
    namespace: str | None = None


def _inner_type(node: ast.expr) -> tuple[str | None, tuple[str, ...] | None]:
    """Display type and ``Literal`` choices of a field's inner annotation."""
    text = unparse(node)
    target = node
    if isinstance(target, ast.Subscript) and dotted(target.value) in (
        "Optional",
        "typing.Optional",
    ):
        target = target.slice
    if isinstance(target, ast.Subscript) and dotted(target.value) in ("Literal", "typing.Literal"):
        elts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        values = [literal_text(e) for e in elts]
        if all(v is not None for v in values):
            return text, tuple(v for v in values if v is not None)
    return text, None


def _dataclass_fields(
    cls: ast.ClassDef, annotated: set[str], lists: dict[str, ast.expr]
) -> list[_Field]:
    """The annotated fields of the dataclass ``cls`` (``ClassVar`` aside),
    with their default, help, choices and flags from ``field(metadata=...)``
    and from ``Annotated[T, ...]`` markers (``annotated``: the names that
    alias ``Annotated`` in the module; ``lists``: its module-level lists)."""
    out: list[_Field] = []
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        ann = stmt.annotation
        if dotted(ann) in ("ClassVar", "typing.ClassVar") or (
            isinstance(ann, ast.Subscript) and dotted(ann.value) in ("ClassVar", "typing.ClassVar")
        ):
            continue
        f = _field_of(stmt, stmt.target.id, ann, lists)
        if isinstance(ann, ast.Subscript) and dotted(ann.value) in annotated:
            elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            if elts:
                f.type, literal = _inner_type(elts[0])
                f.choices = f.choices or literal
                for meta_node in elts[1:]:
                    _annotated_marker(f, meta_node, lists)
        else:
            f.type, literal = _inner_type(ann)
            f.choices = f.choices or literal
        out.append(f)
    return out


def _field_of(stmt: ast.AnnAssign, name: str, ann: ast.expr, lists: dict[str, ast.expr]) -> _Field:
    """The field ``name: ann = value``: its default, and the help and
    choices of a ``field(metadata={...})``."""
    value = stmt.value
    default = unparse(value)
    meta_help: str | None = None
    has_meta = False
    choices: tuple[str, ...] | None = None
    if isinstance(value, ast.Call) and call_name(value) == "field":
        kw = _kw(value)
        default = unparse(kw.get("default"))
        if default is None and "default_factory" in kw:
            default = f"{unparse(kw['default_factory'])}()"
        meta = kw.get("metadata")
        if isinstance(meta, ast.Dict):
            for k, v in zip(meta.keys, meta.values, strict=True):
                key = literal_text(k) if k is not None else None
                if key == "help":
                    meta_help, has_meta = _text(v), True
                elif key == "choices":
                    choices = _choices(v, lists)
    f = _Field(name, stmt.lineno, unparse(ann), default, meta_help, has_meta)
    f.choices = choices
    return f


def _annotated_marker(f: _Field, meta_node: ast.expr, lists: dict[str, ast.expr]) -> None:
    """Read one marker of ``Annotated[T, ...]`` into ``f``: a help text, an
    ``Arg(help=, choices=, no_cli=, action=, cli_name=, aliases=)``, or a
    namespace marker ``NS("disagg")``."""
    text = _text(meta_node)
    if text is not None:
        f.help, f.has_meta = text, True
        return
    if not isinstance(meta_node, ast.Call):
        return
    kw = _kw(meta_node)
    if "help" in kw or "choices" in kw or "no_cli" in kw or call_name(meta_node) == "Arg":
        f.has_meta = True
        f.help = _text(kw.get("help")) or f.help
        f.choices = _choices(kw.get("choices"), lists) or f.choices
        f.no_cli = literal_text(kw["no_cli"]) == "True" if "no_cli" in kw else False
        f.action = unparse(kw.get("action"))
        cli = _text(kw.get("cli_name"))
        aliases = _choices(kw.get("aliases"), lists) or ()
        f.flags = tuple([cli or "--" + f.name.replace("_", "-"), *aliases])
    elif meta_node.args and len(meta_node.args) == 1:
        ns = literal_text(meta_node.args[0])
        if ns is not None and not kw:
            f.namespace = ns


def _loops_over_fields(cls: ast.ClassDef) -> bool:
    """A method iterates ``fields(...)`` and calls ``add_argument`` inside the loop."""
    for node in walk(cls):
        if isinstance(node, (ast.For, ast.comprehension)):
            it = node.iter
            if isinstance(it, ast.Call) and call_name(it) == "fields":
                body = node.body if isinstance(node, ast.For) else []
                for sub in body:
                    for inner in walk(sub):
                        if isinstance(inner, ast.Call) and call_name(inner) == "add_argument":
                            return True
    return False


def _makes_flags(cls: ast.ClassDef) -> bool:
    """The class builds its own flags: a method calls ``add_argument`` or passes
    the class to a helper (``helper(parser, Cls)``)."""
    for node in walk(cls):
        if isinstance(node, ast.Call):
            if call_name(node) == "add_argument":
                return True
            if (
                any(isinstance(a, ast.Name) and a.id == cls.name for a in node.args)
                and len(node.args) >= 2
            ):
                return True
    return False


# --------------------------------------------------------------------------- derived settings


def _self_names(func: ast.FunctionDef | ast.AsyncFunctionDef, selfish: str) -> set[str]:
    """``selfish`` plus locals bound to a call taking it (``cfg = view(self)``) or to it."""
    names = {selfish}
    for stmt in func.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            value = stmt.value
            if (isinstance(value, ast.Name) and value.id in names) or (
                isinstance(value, ast.Call)
                and len(value.args) == 1
                and isinstance(value.args[0], ast.Name)
                and value.args[0].id in names
            ):
                names.add(stmt.targets[0].id)
    return names


def _returned(func: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """The expression of a body that is (docstring, simple assignments,) ``return expr``."""
    body = [
        s
        for s in func.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        and not isinstance(s, (ast.Assign, ast.ImportFrom, ast.Import))
    ]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    return None


def _is_selfish(node: ast.AST, selfs: set[str]) -> bool:
    """``self`` / ``cfg`` or a one-argument call wrapping it (``view(self)``)."""
    if isinstance(node, ast.Name):
        return node.id in selfs
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _is_selfish(node.args[0], selfs)
    return False


def leaf_condition(node: ast.expr, name_of: Any, text_of: Any = unparse) -> Condition | None:
    """A comparison (or a bare read) as a :class:`Condition`.

    ``name_of(expr) -> (name, env) | None`` says which reads are settings;
    ``text_of(expr) -> str`` gives source text.
    """
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = leaf_condition(node.operand, name_of, text_of)
        return None if inner is None else inner.negated()
    read = name_of(node)
    text = text_of(node) or ""
    if read is not None:
        return Condition(read[0], "truthy", (), text, read[1])
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return None
    left, op, right = node.left, node.ops[0], node.comparators[0]
    read = name_of(left)
    if read is None:
        read, left, right = name_of(right), right, left
        if read is None or not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return None
    name, env = read
    if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant):
        value = right.value
        positive = isinstance(op, (ast.Is, ast.Eq))
        if value is None:
            return Condition(name, "is None" if positive else "is not None", (), text, env)
        if isinstance(value, bool):
            truthy = value == positive
            return Condition(name, "truthy" if truthy else "falsy", (), text, env)
    if isinstance(op, (ast.Eq, ast.NotEq)):
        value_text = literal_text(right)
        if value_text is not None:
            return Condition(
                name, "==" if isinstance(op, ast.Eq) else "!=", (value_text,), text, env
            )
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        values = [literal_text(e) for e in right.elts]
        if all(v is not None for v in values):
            return Condition(
                name,
                "in" if isinstance(op, ast.In) else "not in",
                tuple(v for v in values if v is not None),
                text,
                env,
            )
    return Condition(name, "compare", (), text, env)


def _conditions(expr: ast.expr, name_of: Any) -> tuple[list[Condition], str] | None:
    """A boolean expression as (conditions, mode): one condition, or a flat
    ``and`` / ``or`` of them; None when any part is not a setting comparison."""
    if isinstance(expr, ast.BoolOp):
        parts = []
        for value in expr.values:
            cond = leaf_condition(value, name_of)
            if cond is None:
                return None
            parts.append(cond)
        return parts, "all" if isinstance(expr.op, ast.And) else "any"
    cond = leaf_condition(expr, name_of)
    return None if cond is None else ([cond], "all")


class _DerivedFinder:
    """Follows ``return f(self)`` delegations to a boolean expression over fields."""

    def __init__(self, index: SourceIndex, fields: set[str]) -> None:
        self.index = index
        self.fields = fields

    def module_function(
        self, name: str
    ) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        paths = sorted(set(self.index.definitions(name)))
        found = []
        for path in paths:
            tree = self.index.tree(path)
            if tree is None:
                continue
            for stmt in tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                    found.append((path, stmt))
        return found[0] if len(found) == 1 else None

    def resolve(
        self,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        selfish: str,
        methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
        depth: int,
        via: tuple[str, ...],
        path: str,
    ) -> tuple[str, int, str, list[Condition], str, tuple[str, ...]] | None:
        expr = _returned(func)
        if expr is None or depth > MAX_DEPTH:
            return None
        selfs = _self_names(func, selfish)

        def name_of(node: ast.AST) -> tuple[str, bool] | None:
            if (
                isinstance(node, ast.Attribute)
                and _is_selfish(node.value, selfs)
                and node.attr in self.fields
            ):
                return node.attr, False
            return None

        found = _conditions(expr, name_of)
        if found is not None and all(c.op != "compare" or c.name for c in found[0]):
            return path, func.lineno, unparse(expr) or "", found[0], found[1], via
        if isinstance(expr, ast.Call):
            # self.other() or helper(self) / helper(view(self))
            target = expr.func
            if (
                isinstance(target, ast.Attribute)
                and _is_selfish(target.value, selfs)
                and target.attr in methods
                and not expr.args
            ):
                inner = methods[target.attr]
                return self.resolve(
                    inner,
                    inner.args.args[0].arg if inner.args.args else "self",
                    methods,
                    depth + 1,
                    (*via, target.attr),
                    path,
                )
            if isinstance(target, ast.Name) and expr.args and _is_selfish(expr.args[0], selfs):
                hit = self.module_function(target.id)
                if hit is not None:
                    inner_path, inner = hit
                    params = inner.args.posonlyargs + inner.args.args
                    if params:
                        return self.resolve(
                            inner, params[0].arg, methods, depth + 1, (*via, target.id), inner_path
                        )
        return None


def _derived_for_class(
    cls: ast.ClassDef, path: str, fields: set[str], finder: _DerivedFinder
) -> list[Derived]:
    methods = {
        s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    out: list[Derived] = []
    for name, func in sorted(methods.items()):
        params = func.args.posonlyargs + func.args.args
        if name.startswith("__") or len(params) != 1 or func.args.vararg or func.args.kwonlyargs:
            continue
        decorators = {dotted(d) for d in func.decorator_list}
        if decorators - {"property", "functools.cached_property", "cached_property", None}:
            continue
        hit = finder.resolve(func, params[0].arg, methods, 0, (f"{cls.name}.{name}",), path)
        if hit is None:
            continue
        inner_path, line, expression, conds, mode, via = hit
        if not conds or any(c.op == "compare" for c in conds):
            continue
        out.append(
            Derived(
                name=name,
                owner=cls.name,
                path=path,
                line=func.lineno,
                expression=expression,
                conditions=tuple(conds),
                mode="all" if mode == "all" else "any",
                via=via,
            )
        )
    return out


def predicate_function(index: SourceIndex, name: str, config: ConfigModel) -> Derived | None:
    """A module-level zero-argument function ``name`` (one definition in the
    commit) whose body returns a boolean expression over settings read through
    accessors (``get_memory().disable_radix_cache is False and ...``)."""
    accessors = dict(config.accessors)
    zero_arg = re.compile(rb"def " + re.escape(name.encode()) + rb"\(\s*\)")
    paths = [
        p
        for p in sorted(set(index.definitions(name)))
        if zero_arg.search(index.files[p])
        and any(f"{a}()".encode() in index.files[p] for a in accessors)
    ]
    if len(paths) != 1:
        return None
    finder = _DerivedFinder(index, set())
    hit = finder.module_function(name)
    if hit is None:
        return None
    path, func = hit
    if func.args.args or func.args.posonlyargs:
        return None
    expr = _returned(func)
    if expr is None:
        return None

    def name_of(node: ast.AST) -> tuple[str, bool] | None:
        if isinstance(node, ast.Attribute) and config.option(node.attr) is not None:
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Call) and call_name(base) in accessors:
                return node.attr, False
        return None

    found = _conditions(expr, name_of)
    if found is None or any(c.op == "compare" for c in found[0]):
        return None
    return Derived(
        name=name,
        owner="",
        path=path,
        line=func.lineno,
        expression=unparse(expr) or "",
        conditions=tuple(found[0]),
        mode="all" if found[1] == "all" else "any",
        via=(name,),
    )


# --------------------------------------------------------------------------- environment

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _env_kind(callee: str) -> str | None:
    name = callee.lower()
    for kind in ("bool", "int", "float", "str", "json", "tuple", "list"):
        if kind in name:
            return kind
    return None


def _env_registry(path: str, tree: ast.Module) -> list[EnvVar]:
    """Class attributes ``NAME = EnvKind(default, ...)`` of classes holding at least three."""
    out: list[EnvVar] = []
    for cls in walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        found = []
        for stmt in cls.body:
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call)
            ):
                continue
            callee = call_name(stmt.value) or ""
            name = stmt.targets[0].id
            if not callee.startswith("Env") or not _ENV_NAME.match(name) or name != name.upper():
                continue
            kw = _kw(stmt.value)
            default = unparse(stmt.value.args[0]) if stmt.value.args else unparse(kw.get("default"))
            kind = callee[3:].replace("WithAlias", "").lower() or None
            old = _text(kw.get("deprecated_name"))
            for var, replaced_by in ((name, None), (old, name)):
                if var:
                    found.append(
                        EnvVar(var, kind, default, path, stmt.lineno, 0, replaced_by, cls.name)
                    )
        if len(found) >= 3:
            out.extend(found)
    return out


# --------------------------------------------------------------------------- the model


_RETURNS_CLASS = rb"def (get_\w+)\(\)\s*->\s*['\"]?%s['\"]?\s*:"
_RETURNS_BAG = re.compile(
    rb"def (get_\w+)\(\)[^:\n]*:\s*\n\s+return [\w.]+\(\s*['\"](\w+)['\"]\s*\)\s*\n"
)
#: ``def get_parallel() -> ParallelContext:``: an accessor named for a namespace
#: that returns an object of a class of the same file.
_RETURNS_NAMED = re.compile(rb"def get_(\w+)\(\)\s*->\s*['\"]?(\w+)['\"]?\s*:")


def _accessors(
    index: SourceIndex, classes: list[str], namespaces: set[str]
) -> list[tuple[str, str]]:
    """Zero-argument module functions returning the primary arguments object
    (``def get_x() -> Primary:``) or one namespace of it (``def get_disagg():
    return <call>("disagg")`` with ``disagg`` a namespace root; or ``def
    get_parallel() -> ParallelContext:`` where ``parallel`` is a namespace root
    and the class, defined in the same file, answers its attributes with a
    ``__getattr__``: SGLang's ``ParallelContext`` serves the ``parallel``
    leaves), by regular expression over the files that mention them."""
    if not classes:
        return []
    returns_class = re.compile(_RETURNS_CLASS % re.escape(classes[0]).encode())
    roots = {ns.split(".")[0] for ns in namespaces}
    out: set[tuple[str, str]] = set()
    for path in index.grep(b"def get_"):
        data = index.files[path]
        out.update((m.group(1).decode(), "") for m in returns_class.finditer(data))
        for m in _RETURNS_BAG.finditer(data):
            name, ns = m.group(1).decode(), m.group(2).decode()
            if ns in roots and name == f"get_{ns}":
                out.add((name, ns))
        for m in _RETURNS_NAMED.finditer(data):
            ns, cls = m.group(1).decode(), m.group(2)
            if ns in roots and _answers_attributes(data, cls):
                out.add((f"get_{ns}", ns))
    return sorted(out)


def _answers_attributes(data: bytes, cls: bytes) -> bool:
    """Whether the file ``data`` defines the class ``cls`` with a ``__getattr__``
    before its next top-level statement."""
    start = re.search(rb"^class %s\b[^\n]*:\n" % re.escape(cls), data, re.M)
    if start is None:
        return False
    end = re.search(rb"^\S", data[start.end() :], re.M)
    body = data[start.end() : start.end() + end.start()] if end else data[start.end() :]
    return re.search(rb"^\s+def __getattr__\(", body, re.M) is not None


def argument_objects(classes: tuple[str, ...] | list[str]) -> frozenset[str]:
    """The names under which code holds the arguments object: ``args``,
    ``server_args`` and the primary class's name in snake case
    (``server_args`` for ``ServerArgs``), bare or as an attribute of ``self``."""
    objects = {"args", "self.args", "server_args", "self.server_args"}
    for cls in classes[:1]:
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", cls).lower()
        objects |= {snake, f"self.{snake}", f"self._{snake}"}
    return frozenset(objects)


def _stored_first(init: ast.FunctionDef) -> str | None:
    """The attribute under which ``__init__`` keeps its first parameter after
    ``self`` (``self.x = p``, ``object.__setattr__(self, "x", p)`` or
    ``setattr(self, "x", p)``), or None."""
    params = init.args.args
    if len(params) < 2:
        return None
    first = params[1].arg
    for node in walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and dotted(target.value) == "self"
                and isinstance(node.value, ast.Name)
                and node.value.id == first
            ):
                return target.attr
        if (
            isinstance(node, ast.Call)
            and (dotted(node.func) or "") in ("object.__setattr__", "setattr")
            and len(node.args) == 3
        ):
            who, key, value = node.args
            if (
                dotted(who) == "self"
                and isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and isinstance(value, ast.Name)
                and value.id == first
            ):
                return key.value
    return None


def _falls_through(getattr_def: ast.FunctionDef, stored: str) -> bool:
    """Whether ``__getattr__`` answers with ``getattr(<the object stored as
    stored>, name)``: it calls ``getattr`` with its own name parameter and
    reads ``stored`` (``self.stored`` or the string ``"stored"``)."""
    params = getattr_def.args.args
    if len(params) != 2:
        return False
    name = params[1].arg
    calls = reads = False
    for node in walk(getattr_def):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Name)
            and node.args[1].id == name
        ):
            calls = True
        if (isinstance(node, ast.Attribute) and node.attr == stored) or (
            isinstance(node, ast.Constant) and node.value == stored
        ):
            reads = True
    return calls and reads


def _proxy_classes(tree: ast.Module) -> set[str]:
    """Classes of ``tree`` whose instances answer any attribute they lack
    from the object their constructor was given first (a read-through view:
    ``__init__`` keeps the argument, ``__getattr__`` falls through to it)."""
    found = set()
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
        init, get = methods.get("__init__"), methods.get("__getattr__")
        if init is None or get is None:
            continue
        stored = _stored_first(init)
        if stored is not None and _falls_through(get, stored):
            found.add(cls.name)
    return found


def _view_makers(tree: ast.Module, proxies: set[str]) -> set[str]:
    """Module functions of ``tree`` that return a proxy class (``proxies``)
    built around their first parameter, on every ``return``."""
    found = set()
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not fn.args.args:
            continue
        first = fn.args.args[0].arg
        returns = [n for n in walk(fn) if isinstance(n, ast.Return)]
        if returns and all(
            isinstance(r.value, ast.Call)
            and isinstance(r.value.func, ast.Name)
            and r.value.func.id in proxies
            and r.value.args
            and isinstance(r.value.args[0], ast.Name)
            and r.value.args[0].id == first
            for r in returns
        ):
            found.add(fn.name)
    return found


def _binds(node: ast.AST) -> list[str]:
    """The names ``node`` binds: assignment and loop targets, parameters,
    ``def``/``class`` names, and what :func:`~miner.extract.ast_fallback.names_bound`
    reads (imports, ``global``, ``except ... as``, ``match`` captures)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    return names_bound(node)


def argument_views(
    index: SourceIndex, objects: frozenset[str]
) -> list[tuple[str, int, int, tuple[str, ...]]]:
    """The local names that hold a view of the arguments object, per
    function: (path, first line, last line of the ``def``, names), sorted.

    A view is a proxy class (:func:`_proxy_classes`) built around the
    arguments object (one of ``objects``), directly or by a function that
    returns one (:func:`_view_makers`: ``resolving_view(server_args)`` in
    SGLang's ``arg_groups``). A name counts in a module function or a method
    only when every binding of it there (parameters and nested functions
    included) is ``name = <view>(<arguments object>)``. Each file is parsed
    once (:meth:`SourceIndex.tree`)."""
    makers: set[str] = set()
    for path in index.grep(b"def __getattr__"):
        tree = index.tree(path)
        if tree is not None:
            proxies = _proxy_classes(tree)
            makers |= proxies | _view_makers(tree, proxies)
    if not makers:
        return []
    needles = [f"{m}(".encode() for m in sorted(makers)]
    out: list[tuple[str, int, int, tuple[str, ...]]] = []
    for path in index.grep(*needles):
        tree = index.tree(path)
        if tree is None:
            continue
        for fn in _functions(tree.body):
            names = _view_names(fn, makers, objects)
            if names:
                out.append((path, fn.lineno, fn.end_lineno or fn.lineno, names))
    return sorted(out)


def _functions(body: list[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module functions and methods (of classes at any depth) of ``body``;
    not the functions nested in them (they are part of their function)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield stmt
        elif isinstance(stmt, ast.ClassDef):
            yield from _functions(stmt.body)


def _view_names(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, makers: set[str], objects: frozenset[str]
) -> tuple[str, ...]:
    """The names every binding of which in ``fn`` (nested functions and its
    parameters included) is ``name = <maker>(<arguments object>)``."""
    views: dict[str, int] = defaultdict(int)
    bindings: dict[str, int] = defaultdict(int)
    for node in walk(fn):
        if node is not fn:
            for name in _binds(node):
                bindings[name] += 1
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id in makers
            and len(node.value.args) >= 1
            and not node.value.keywords
            and dotted(node.value.args[0]) in objects
        ):
            views[node.targets[0].id] += 1
    return tuple(sorted(n for n, count in views.items() if count == bindings[n]))


def _entry_point(
    index: SourceIndex, primary: str | None, class_path: str | None, *, imported: bool = False
) -> str | None:
    """``python -m <module>`` of the shortest ``__main__`` module that parses the
    primary arguments class (names it, or a function of its module returning it).

    With ``imported``, the module must also import the class's own module by
    its dotted name: two classes may share a name (``ServerArgs``).
    """
    if primary is None or class_path is None:
        # plain argparse: the shortest ``__main__`` module that adds arguments
        mains = [
            index.module_name(p)
            for p in index.grep(b"add_argument")
            if b"__main__" in index.files[p]
        ]
        return min(mains, key=lambda m: (m.count("."), len(m), m)) if mains else None
    tree = index.tree(class_path)
    makers = {primary}
    if tree is not None:
        for stmt in tree.body:
            if (
                isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                and (unparse(stmt.returns) or "").strip("'\"") == primary
            ):
                makers.add(stmt.name)
    candidates = []
    for path in index.grep(b"__main__"):
        data = index.files[path]
        if path == class_path or "/test" in path or "bench" in path:
            continue
        if imported and not _imports_module(data, index.module_name(class_path)):
            continue
        if any(re.search(rb"\b" + m.encode() + rb"\b", data) for m in makers):
            module = index.module_name(path)
            launcher = not any(
                w in module.rsplit(".", 1)[-1] for w in ("launch", "serve", "main", "cli", "run")
            )
            candidates.append((module.count("."), launcher, len(module), module))
    return min(candidates)[3] if candidates else None


def _dataclass_candidates(
    index: SourceIndex, argparse_paths: list[str], defaults_from: set[str]
) -> list[str]:
    """Files that may hold an arguments dataclass: argparse files that mention
    dataclasses, and the files defining classes that argparse code names
    (``default=Cls.x``, ``helper(parser, Cls)``, ``HfArgumentParser(Cls)``)."""
    names = set(defaults_from)
    for path in argparse_paths:
        tree = index.tree(path)
        if tree is None:
            continue
        for node in walk(tree):
            if isinstance(node, ast.Call) and any(
                isinstance(a, ast.Name) and a.id[:1].isupper() for a in node.args
            ):
                func = (call_name(node) or "").lower()
                if "arg" in func or "pars" in func or "cli" in func:
                    names.update(
                        a.id for a in node.args if isinstance(a, ast.Name) and a.id[:1].isupper()
                    )
    paths = {p for p in argparse_paths if b"dataclass" in index.files[p]}
    for name in names:
        paths.update(p for p in index.definitions(name) if b"dataclass" in index.files[p])
    return sorted(paths)


def mine_config(
    index: SourceIndex, argparse: Mapping[str, Sequence[Option]] | None = None
) -> ConfigModel:
    """The configuration model of the commit held by ``index``; ``argparse``:
    the :func:`argparse_options` of files read before, by path (the others
    are read here)."""
    argparse_paths = index.grep(b"add_argument")
    options: list[Option] = []
    for path in argparse_paths:
        if argparse is not None and path in argparse:
            options.extend(argparse[path])
        elif (tree := index.tree(path)) is not None:
            options.extend(argparse_options(path, tree))
    found = _dataclasses(index, argparse_paths, options)
    options = _placed(index, found, [*options, *found.options])
    derived: list[Derived] = []
    for cls, path in found.pending:
        fields = found.class_fields.get(cls.name, set())
        derived.extend(_derived_for_class(cls, path, fields, _DerivedFinder(index, fields)))
    classes = list(dict.fromkeys(name for _, name, _ in found.class_sizes))
    namespaces = {o.namespace for o in options if o.namespace}
    primary_path = found.class_sizes[0][2] if found.class_sizes else None
    options.sort(key=lambda o: (o.owner, o.name, o.path, o.line, o.flags))
    derived.sort(key=lambda d: (d.owner, d.name, d.path, d.line))
    return ConfigModel(
        options=tuple(options),
        derived=tuple(derived),
        env=tuple(_mine_env(index)),
        classes=tuple(classes),
        accessors=tuple(_accessors(index, classes, namespaces)),
        views=tuple(argument_views(index, argument_objects(classes))),
        entry_point=_entry_point(index, classes[0] if classes else None, primary_path),
        entry_points=tuple(_other_entry_points(index, found.class_sizes[1:], options)),
        scripts=tuple(
            sorted(
                {
                    o.path
                    for o in options
                    if o.path and _runs_as_script(o.path, index.files.get(o.path, b""))
                }
            )
        ),
    )


@dataclass
class _Dataclasses:
    """What :func:`_dataclasses` found: the options of the arguments
    dataclasses' fields no ``add_argument`` defines, each class's size,
    fields and field defaults, and the classes (with their file) whose
    derived settings are read."""

    options: list[Option] = field(default_factory=list)
    class_sizes: list[tuple[int, str, str]] = field(default_factory=list)
    """(number of fields, class, path), largest first."""
    class_fields: dict[str, set[str]] = field(default_factory=dict)
    field_defaults: dict[tuple[str, str, str], str | None] = field(default_factory=dict)
    pending: list[tuple[ast.ClassDef, str]] = field(default_factory=list)


def _dataclasses(
    index: SourceIndex, argparse_paths: list[str], options: list[Option]
) -> _Dataclasses:
    """The arguments dataclasses of the commit: those that make flags, that
    the ``default=Cls.field`` of an ``add_argument`` names, or that derive
    from a mixin whose flags take ``default=cls.field``."""
    explicit = {(o.name, o.path) for o in options if o.deprecated_for is None}
    defaults_from = {
        head
        for o in options
        if o.default and "." in o.default
        if (head := o.default.split(".", 1)[0])[:1].isupper()
    }
    mixins = {o.owner for o in options if (o.default or "").startswith("cls.")}
    out = _Dataclasses()
    for path in _dataclass_candidates(index, argparse_paths, defaults_from):
        tree = index.tree(path)
        if tree is None:
            continue
        annotated = _annotated_aliases(tree)
        lists = _module_lists(tree)
        for cls in tree.body:
            if not (isinstance(cls, ast.ClassDef) and _is_dataclass(cls)):
                continue
            if not (
                _makes_flags(cls)
                or cls.name in defaults_from
                or any((dotted(b) or "").split(".")[-1] in mixins for b in cls.bases)
            ):
                continue
            fields = _dataclass_fields(cls, annotated, lists)
            if fields:
                _add_dataclass(out, cls, path, fields, explicit)
    out.class_sizes.sort(key=lambda t: (-t[0], t[1], t[2]))
    return out


def _add_dataclass(
    out: _Dataclasses,
    cls: ast.ClassDef,
    path: str,
    fields: list[_Field],
    explicit: set[tuple[str, str]],
) -> None:
    """Record one arguments dataclass in ``out``: its size, fields, defaults,
    and an option for each field no ``add_argument`` of its file defines
    (``explicit``)."""
    every = _loops_over_fields(cls)
    out.class_sizes.append((len(fields), cls.name, path))
    out.class_fields[cls.name] = out.class_fields.get(cls.name, set()) | {f.name for f in fields}
    for f in fields:
        out.field_defaults.setdefault((path, cls.name, f.name), f.default)
    out.pending.append((cls, path))
    for f in fields:
        if (f.name, path) in explicit:
            continue
        if f.has_meta and not f.no_cli:
            flags = f.flags or ("--" + f.name.replace("_", "-"),)
        elif every:
            flags = ("--" + f.name.replace("_", "-"),)
        else:
            flags = ()
        out.options.append(
            Option(
                name=f.name,
                flags=flags,
                owner=cls.name,
                path=path,
                line=f.line,
                source="dataclass",
                type=f.type,
                default=f.default,
                choices=f.choices,
                help=f.help,
                action=f.action or ("store_true" if _is_bool_type(f.type) and flags else None),
                namespace=f.namespace,
            )
        )


def _placed(index: SourceIndex, found: _Dataclasses, options: list[Option]) -> list[Option]:
    """``options`` with their module, an ``add_argument`` that stores into a
    dataclass field owned by that class, and a ``default=cls.field`` of a
    mixin read from the arguments dataclass that derives from it."""
    subclasses: dict[str, list[str]] = defaultdict(list)
    for cls, _ in found.pending:
        for base in cls.bases:
            base_name = dotted(base)
            if base_name:
                subclasses[base_name.split(".")[-1]].append(cls.name)
    owned: list[Option] = []
    for o in options:
        if o.source == "argparse":
            for _, name, path in found.class_sizes:
                if path == o.path and o.name in found.class_fields.get(name, set()):
                    o = Option(**{**_asdict(o), "owner": name})
                    break
        owned.append(o)
    return [
        Option(
            **{
                **_asdict(o),
                "module": index.module_name(o.path),
                "default": _class_default(o, found.field_defaults, subclasses),
            }
        )
        for o in owned
    ]


#: ``if __name__ == "__main__":`` (either quotes, either order).
_MAIN_TEST = re.compile(
    rb"""(?m)^if\s+(?:__name__\s*==\s*["']__main__["']|["']__main__["']\s*==\s*__name__)\s*:"""
)


def _runs_as_script(path: str, data: bytes) -> bool:
    """Whether the module ``path`` (its bytes ``data``) does something when run
    with ``python -m``: a package's ``__main__.py``, or a module with a
    top-level ``if __name__ == "__main__":``."""
    return path.endswith("/__main__.py") or _MAIN_TEST.search(data) is not None


def _imports_module(data: bytes, module: str) -> bool:
    """Whether ``data`` imports ``module`` or from it, or from its package
    (``from pkg.server_args import ServerArgs`` for ``pkg/server_args/server_args.py``
    re-exported by the package)."""
    names = [module]
    if "." in module:
        names.append(module.rsplit(".", 1)[0])
    alternatives = b"|".join(re.escape(n.encode()) for n in names)
    pattern = (
        rb"(?m)^\s*(?:from\s+(?:"
        + alternatives
        + rb")\s+import\b|import\s+"
        + (re.escape(module.encode()) + rb"\b)")
    )
    return re.search(pattern, data) is not None


def _other_entry_points(
    index: SourceIndex, others: list[tuple[int, str, str]], options: list[Option]
) -> list[tuple[str, str, str]]:
    """(class, path, module) of the arguments classes after the primary one
    that own flags and whose ``__main__`` module was found (it imports the
    class's module and names the class or a function returning it)."""
    flagged = {(o.owner, o.path) for o in options if o.flags}
    out = []
    missing = []
    for _, cls, path in others:
        if (cls, path) not in flagged:
            continue
        module = _entry_point(index, cls, path, imported=True)
        if module is not None:
            out.append((cls, path, module))
        else:
            missing.append((cls, path))
    # A class whose flags another class's parser adds (``PipelineConfig.add_cli_args(parser)``
    # inside the diffusion ``ServerArgs.add_cli_args``) shares that class's command.
    changed = True
    while changed and missing:
        changed = False
        for cls, path in list(missing):
            adds = re.compile(rb"\b" + re.escape(cls.encode()) + rb"\.add_\w*\(\s*parser\b")
            host = next((m for _, p, m in out if adds.search(index.files.get(p, b""))), None)
            if host is not None:
                out.append((cls, path, host))
                missing.remove((cls, path))
                changed = True
    return out


#: Marks the default of a flag whose parser leaves it out of the namespace
#: when not given (``argparse.SUPPRESS``): the ``Cls.field`` it then keeps.
_SUPPRESSED = "\0suppressed:"


def _class_default(
    o: Option,
    field_defaults: Mapping[tuple[str, str, str], str | None],
    subclasses: Mapping[str, list[str]],
) -> str | None:
    """``default=ServerArgs.nnodes`` -> the field's own default (``1``).

    The class is looked up in the option's file first, then by name when one
    arguments dataclass alone has that name and field; otherwise the text
    stays, except for a suppressed flag's field (:data:`_SUPPRESSED`) and a
    classmethod's ``cls.field``: None. ``cls`` is the option's owner or the
    one arguments dataclass among its subclasses (``subclasses``: class name
    -> the dataclasses that list it as a base) that has the field
    (multimodal_gen's ``DisaggServerArgsMixin.add_disagg_cli_args``:
    ``default=cls.disagg_timeout``, declared by ``ServerArgs``: 3600).
    """
    default = o.default
    if default is not None and default.startswith(_SUPPRESSED):
        field_of = replace(o, default=default[len(_SUPPRESSED) :])
        found = _class_default(field_of, field_defaults, subclasses)
        return None if found == field_of.default else found
    if default is not None and default.startswith("cls.") and default.count(".") == 1:
        name = default[len("cls.") :]
        owners = {o.owner, *subclasses.get(o.owner, ())}
        values = {
            v for (_, cls, field), v in field_defaults.items() if cls in owners and field == name
        }
        return values.pop() if len(values) == 1 else None
    if not default or default.count(".") != 1:
        return default
    head, name = default.split(".")
    if (o.path, head, name) in field_defaults:
        found = field_defaults[(o.path, head, name)]
        return found if found is not None else default
    matches = [v for (_, cls, field), v in field_defaults.items() if (cls, field) == (head, name)]
    if len(matches) == 1 and matches[0] is not None:
        return matches[0]
    return default


def _is_bool_type(annotation: str | None) -> bool:
    """``bool``, ``Optional[bool]`` or ``bool | None``: a switch once the
    dataclass is turned into flags (the wrappers unwrap ``Optional`` first, as
    SGLang's ``add_cli_args_from_dataclass`` does in ``arg_groups/arg_utils.py``)."""
    text = (annotation or "").replace(" ", "")
    return text in ("bool", "Optional[bool]", "bool|None", "None|bool", "typing.Optional[bool]")


def _asdict(o: Option) -> dict[str, Any]:
    return {name: getattr(o, name) for name in Option.__dataclass_fields__}


#: Literal environment reads, found by regular expression (no parse):
#: ``os.environ.get("X", d)``, ``os.getenv("X")``, ``os.environ["X"]``,
#: ``"X" in os.environ``, ``setdefault``, and helper readers
#: ``get_bool_env_var("X", "false")``; not the writes ``os.environ["X"] = v``,
#: ``del os.environ["X"]`` and ``os.environ.pop("X")`` (:data:`_ENV_WRITE`).
_ENV_PATTERNS = (
    re.compile(
        rb"""(?:environ\.(?:get|setdefault|pop)|\bgetenv)\(\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]"""
        rb"""(?:\s*,\s*([^()\n]*?|[\w.]+\([^()\n]*\)))?\s*\)"""
    ),
    re.compile(rb"""environ\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s*\]()"""),
    re.compile(rb"""['"]([A-Za-z_][A-Za-z0-9_]*)['"]\s+(?:not\s+)?in\s+os\.environ\b()"""),
)
#: After ``os.environ["X"]``: an assignment to it (a write, not a read).
_ENV_WRITE = re.compile(rb"[ \t]*(?:[-+*/|&]|//)?=(?!=)")
#: Before ``os.environ["X"]``: a deletion (``del os.environ["X"]``).
_ENV_DELETE = re.compile(rb"\bdel[ \t]+(?:os\.)?$")
_ENV_HELPER = re.compile(
    rb"""\b(get_\w*env\w*|\w+_env_var|\w*getenv\w*)\(\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]"""
    rb"""(?:\s*,\s*(?:default\s*=\s*)?([^()\n]*?))?\s*\)"""
)
_REGISTRY_LINE = re.compile(rb"^[ \t]+[A-Z][A-Z0-9_]*[ \t]*=[ \t]*Env\w*\(", re.M)


def _normal(text: bytes | None) -> str | None:
    """Default text as ``ast.unparse`` writes it (``"0"`` -> ``'0'``), else as found."""
    if not text:
        return None
    raw = text.decode("utf-8", "replace").strip()
    node = parse_expr(raw)
    return (unparse(node) if node is not None else None) or raw or None


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


#: One read of a variable: (path, kind of the helper, default as written, line).
_EnvRead = tuple[str, str | None, str | None, int]


def _mine_env(index: SourceIndex) -> list[EnvVar]:
    """The environment variables of the commit: those its registries declare
    (with their declared default), and those it reads with ``os.environ`` /
    ``os.getenv`` / a helper (:func:`_env_reads`), by name."""
    declared: dict[str, EnvVar] = {}
    reads: dict[str, list[_EnvRead]] = defaultdict(list)
    for path in index.grep(b"environ", b"getenv", b"env_var", b"= Env"):
        data = index.files[path]
        if len(_REGISTRY_LINE.findall(data)) >= 3:
            tree = index.tree(path)
            if tree is not None:
                for var in _env_registry(path, tree):
                    declared.setdefault(var.name, var)
        for name, read in _env_reads(path, data):
            reads[name].append(read)
    out: list[EnvVar] = []
    for name in sorted(set(declared) | set(reads)):
        found = sorted(reads.get(name, []), key=lambda r: (r[0], r[3]))
        if name in declared:
            out.append(replace(declared[name], reads=len(found)))
        else:
            out.append(_read_variable(name, found))
    return out


def _env_reads(path: str, data: bytes) -> Iterator[tuple[str, _EnvRead]]:
    """(name, read) of every read of a variable in the file ``path``
    (writes, ``pop`` and ``del`` aside; helpers that set are no reads)."""
    for pattern in _ENV_PATTERNS:
        for m in pattern.finditer(data):
            if (
                m.group(0).startswith(b"environ.pop")
                or _ENV_WRITE.match(data, m.end())
                or _ENV_DELETE.search(data, max(0, m.start() - 12), m.start())
            ):
                continue
            yield m.group(1).decode(), (path, None, _normal(m.group(2)), _line_of(data, m.start()))
    for m in _ENV_HELPER.finditer(data):
        helper = m.group(1).decode()
        if "set" not in helper:
            read = (path, _env_kind(helper), _normal(m.group(3)), _line_of(data, m.start()))
            yield m.group(2).decode(), read


def _read_variable(name: str, found: list[_EnvRead]) -> EnvVar:
    """A variable no registry declares, from its reads (sorted by place).
    The library's own reads first (a test helper's default is not the
    program's); a default only when those reads agree on one, with the
    place of a read that gives it."""
    main = [r for r in found if path_kind(r[0]) is None] or found
    defaults = {r[2] for r in main if r[2] is not None}
    default = next(iter(defaults)) if len(defaults) == 1 else None
    first = next((r for r in main if r[2] == default), main[0]) if default else main[0]
    kind = next((r[1] for r in main if r[1]), None)
    return EnvVar(
        name=name, kind=kind, default=default, path=first[0], line=first[3], reads=len(found)
    )


def _literal_or_text(node: ast.AST | None) -> str | None:
    """A literal's value (``"store_true"`` -> ``store_true``), else the source text."""
    if node is None:
        return None
    return literal_text(node) if isinstance(node, ast.Constant) else unparse(node)


# --------------------------------------------------------------------------- resolution

#: A file or folder that handles arguments (``arg_groups/``, ``server_args.py``).
_ARGS_FILE = re.compile(r"(?:^|/)[^/]*(?:args|arg_)[^/]*(?:/|\.py$)")


@dataclass(frozen=True, slots=True)
class Resolved:
    """A literal value the code itself stores into a setting while it checks or
    resolves the arguments (``declared["x"] = "extra_buffer"``, ``self.x = "auto"``)."""

    name: str
    value: str
    path: str
    line: int


def _stored(target: ast.expr, names: set[str]) -> str | None:
    """The setting a store target writes: ``o["x"]`` or ``o.x`` for ``x`` in ``names``."""
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        key = target.slice.value
        return key if isinstance(key, str) and key in names else None
    if isinstance(target, ast.Attribute) and target.attr in names:
        return target.attr
    return None


def mine_resolutions(index: SourceIndex, config: ConfigModel) -> dict[str, tuple[Resolved, ...]]:
    """Setting name -> the literal values the argument-handling code stores into it.

    Read from the files defining the arguments classes and from files or
    folders about arguments (``arg_groups/``, ``*_args.py``): assignments
    ``o["x"] = v`` / ``o.x = v``, dict literals ``{"x": v}`` and keyword
    arguments ``f(..., x=v)`` with a literal ``v``. This says which values a
    setting may be given at start-up besides what the user passed (``auto``
    resolved to ``extra_buffer``), not when.
    """
    names = {o.name for o in config.options if o.flags and o.owner in config.classes[:1]}
    if not names:
        return {}
    class_paths = {o.path for o in config.options if o.owner in config.classes[:1]}
    paths = sorted(p for p in index.files if p in class_paths or _ARGS_FILE.search(p))
    found: dict[str, list[Resolved]] = defaultdict(list)
    for path in paths:
        tree = index.tree(path)
        if tree is None:
            continue
        for node in walk(tree):
            pairs: list[tuple[str | None, ast.expr, int]] = []
            if isinstance(node, ast.Assign):
                pairs = [(_stored(t, names), node.value, node.lineno) for t in node.targets]
            elif isinstance(node, ast.Dict):
                pairs = [
                    (k.value, v, k.lineno)
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in names
                ]
            elif isinstance(node, ast.Call):
                # ``declare_late_resolution(args, "hook", enable_lora=True)``
                pairs = [
                    (k.arg, k.value, k.value.lineno)
                    for k in node.keywords
                    if k.arg is not None and k.arg in names
                ]
            for name, value, line in pairs:
                if name is None or not isinstance(value, ast.Constant):
                    continue
                text = literal_text(value)
                if text is not None:
                    found[name].append(Resolved(name, text, path, line))
    return {name: tuple(values) for name, values in sorted(found.items())}
