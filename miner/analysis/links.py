"""Guards linked to settings: which flags, derived settings and environment variables a guard reads.

For each ``if`` / ``while`` / ``assert`` guard of a site, the test is parsed
with ``ast`` and every read is classified:

* ``<obj>.x`` where ``x`` is a setting of the configuration model. The link is
  *exact* when ``<obj>`` is the arguments object (``server_args``,
  ``self.server_args``, ``args``, an accessor such as ``get_server_args()``, or
  a namespace accessor whose namespace holds ``x``: ``get_disagg().x``), else
  *by name* (``params.x`` only carries the setting's name).
* ``<obj>.m()`` / ``<obj>.m`` where ``m`` is a derived setting, and ``f()``
  where ``f`` is a predicate function over settings: linked through the
  derived setting's conditions.
* ``envs.X.get()``, ``get_bool_env_var("X")``, ``os.environ.get("X")``,
  ``os.getenv("X")``, ``os.environ["X"]``, ``"X" in os.environ``: the variable.

Comparisons (``== "host_pool"``, ``in (...)``, ``is None``, ``not``) and the
guard's polarity (an earlier ``if`` branch, a failing ``assert``) become
:class:`~miner.analysis.config.Condition` records that say what makes the
error happen.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from miner.analysis.code import call_name, dotted, literal_text, parse_expr, unparse
from miner.analysis.config import (
    Condition,
    ConfigModel,
    Derived,
    Option,
    argument_objects,
    leaf_condition,
)
from miner.analysis.places import path_kind
from miner.model import Guard, Site

ReadKind = Literal["option", "derived", "env"]

#: Names too generic to link by name alone (``self.device`` is not ``--device``).
_MIN_BY_NAME = 8


@dataclass(frozen=True, slots=True)
class Read:
    """One read of a setting in a guard test."""

    text: str
    """The expression as written (``get_disagg().disaggregation_decode_retraction_backup``)."""
    kind: ReadKind
    target: str
    """Option field name, derived setting name, or environment variable name."""
    exact: bool
    """True when the object read is the arguments object (or the variable itself)."""
    evidence: str
    """Why the link holds, one line of Markdown."""
    option_path: str | None = None
    """For an option, the file defining it (:meth:`ConfigModel.option_in`):
    two options may share a name (``--quantization`` of ``sglang.srt`` and of
    the diffusion server)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "kind": self.kind,
            "target": self.target,
            "exact": self.exact,
            "evidence": self.evidence,
        }


@dataclass(frozen=True, slots=True)
class Clause:
    """One part of a guard that must hold for the error: ``condition`` over ``read``
    (None when the part reads no setting; ``condition.name`` is then the code text)."""

    condition: Condition
    read: Read | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "condition": self.condition.to_json(),
            "read": None if self.read is None else self.read.to_json(),
        }


@dataclass(frozen=True, slots=True)
class GuardLink:
    """What one guard requires for the raise to be reached."""

    index: int
    """Position of the guard in ``Site.guards``."""
    guard: Guard
    mode: Literal["all", "any"]
    clauses: tuple[Clause, ...]
    """Empty for guards that are not conditions (``try``, ``for``, ``except``...)."""

    @property
    def linked(self) -> bool:
        return any(c.read is not None for c in self.clauses)

    def to_json(self) -> dict[str, Any]:
        return {
            "guard": self.index,
            "mode": self.mode,
            "clauses": [c.to_json() for c in self.clauses],
        }


class Linker:
    """Links guard tests to one configuration model (and its predicate functions)."""

    def __init__(self, config: ConfigModel, predicates: dict[str, Derived] | None = None) -> None:
        self.config = config
        self.predicates = predicates or {}
        self.accessors = dict(config.accessors)
        self.objects = argument_objects(config.classes)
        self._parse = lru_cache(maxsize=65536)(self._parse_test)
        self._src = b""
        self._near: str | None = None
        self._views: frozenset[str] = frozenset()
        """The names holding a view of the arguments object in the function
        being linked (:meth:`ConfigModel.views_in`)."""
        self._guards: dict[
            tuple[str, bool, str | None, frozenset[str]],
            tuple[Literal["all", "any"], tuple[Clause, ...]],
        ] = {}

    # ----------------------------------------------------------------- reads

    def _object_exact(self, base: ast.expr, option: Option | None, chain: list[str]) -> bool:
        """Is ``base`` (with ``chain`` of attributes after it) the arguments object?"""
        text = dotted(base)
        if text is not None and not chain:
            return self._is_object(text)
        if isinstance(base, ast.Call) and not base.args:
            name = call_name(base)
            if name in self.accessors:
                ns = self.accessors[name]
                path = ".".join([ns, *chain]) if ns else ".".join(chain)
                if not ns and not chain:
                    return True
                return option is not None and (option.namespace or "") == path
        return False

    def _is_object(self, text: str) -> bool:
        """Is ``text`` the arguments object, by its name or as a local that
        holds a view of it in the function being linked
        (:meth:`ConfigModel.views_in`)?"""
        return text in self.objects or text in self._views

    def _split(self, node: ast.Attribute) -> tuple[ast.expr, list[str]]:
        """``get_exec().mamba.x`` -> (``get_exec()``, ``["mamba"]``)."""
        chain: list[str] = []
        base = node.value
        while isinstance(base, ast.Attribute) and not self._is_object(dotted(base) or ""):
            chain.append(base.attr)
            base = base.value
        return base, list(reversed(chain))

    def _env_name(self, node: ast.AST) -> str | None:
        """The variable of an environment read, or None."""
        if isinstance(node, ast.Call):
            func = dotted(node.func) or ""
            name = call_name(node) or ""
            if isinstance(node.func, ast.Attribute) and name in ("get", "is_set", "value"):
                holder = node.func.value
                if isinstance(holder, ast.Attribute) and self.config.env_var(holder.attr):
                    var = self.config.env_var(holder.attr)
                    if var is not None and var.registry:
                        return holder.attr
            if node.args and isinstance(node.args[0], ast.Constant):
                key = literal_text(node.args[0])
                if (
                    key
                    and self.config.env_var(key)
                    and (
                        func.endswith("environ.get")
                        or func.endswith("getenv")
                        or re.match(r"^(get_\w*env\w*|\w+_env_var)$", name)
                    )
                ):
                    return key
        if isinstance(node, ast.Subscript) and (dotted(node.value) or "").endswith("environ"):
            key = literal_text(node.slice) if isinstance(node.slice, ast.Constant) else None
            if key and self.config.env_var(key):
                return key
        return None

    def text(self, node: ast.AST) -> str:
        """Source text of a node of the test being linked (as written)."""
        src = self._src
        if getattr(node, "lineno", 0) == 1 and getattr(node, "end_lineno", 0) == 1:
            return src[node.col_offset : node.end_col_offset].decode("utf-8", "replace")  # type: ignore[attr-defined]
        return unparse(node) or ""

    def classify(self, node: ast.AST) -> Read | None:
        """The setting read by ``node``, or None. An option is looked up near
        the file being linked (:meth:`ConfigModel.option`), and a read by
        name alone links only to an option of that file's package part:
        ``video.num_frames`` in ``sglang.srt`` is not the diffusion
        ``SamplingParams.num_frames``."""
        text = self.text(node)
        env = self._env_name(node)
        if env is not None:
            return Read(text, "env", env, True, f"`{text}` reads the environment variable `{env}`")
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            found = self._called(node, text)
            if found is not None:
                return found
        if isinstance(node, ast.Attribute):
            return self._attribute(node, text)
        if isinstance(node, ast.Name) and self._nameable(node.id):
            return self._named(node.id, text)
        return None

    def _called(self, node: ast.Call, text: str) -> Read | None:
        """``pred()`` of a predicate function, or ``obj.derived()`` of a
        derived setting (:meth:`classify`)."""
        if isinstance(node.func, ast.Name) and node.func.id in self.predicates:
            pred = self.predicates[node.func.id]
            evidence = f"`{node.func.id}()` (`{pred.path}:{pred.line}`) returns `{pred.expression}`"
            return Read(text, "derived", node.func.id, True, evidence)
        if isinstance(node.func, ast.Attribute):
            derived = self.config.derived_setting(node.func.attr)
            if derived is not None:
                exact = self._object_exact(node.func.value, None, [])
                evidence = self._derived_evidence(text, derived, exact)
                return Read(text, "derived", derived.name, exact, evidence)
        return None

    def _attribute(self, node: ast.Attribute, text: str) -> Read | None:
        """``obj.name`` of an option (read from an arguments object, or by
        its name alone where that is allowed) or of a derived setting."""
        name = node.attr
        base, chain = self._split(node)
        option = self.config.option(name, self._near)
        derived = self.config.derived_setting(name)
        exact = self._object_exact(base, option, chain)
        if option is not None and (exact or self._by_name(option)):
            where = f"`{option.owner}.{name}`"
            evidence = (
                f"`{text}` reads the setting {where}"
                if exact
                else f"`{text}` has the name of the setting {where}"
            )
            return Read(text, "option", name, exact, evidence, option.path)
        if derived is not None and (exact or self._nameable(name)):
            return Read(text, "derived", name, exact, self._derived_evidence(text, derived, exact))
        return None

    def _named(self, name: str, text: str) -> Read | None:
        """A bare name that is an option's (read by name alone) or a derived setting's."""
        opt = self.config.option(name, self._near)
        if opt is not None and self._by_name(opt):
            evidence = f"`{text}` has the name of the setting `{opt.owner}.{name}`"
            return Read(text, "option", name, False, evidence, opt.path)
        derived = self.config.derived_setting(name)
        if derived is not None:
            return Read(text, "derived", name, False, self._derived_evidence(text, derived, False))
        return None

    @staticmethod
    def _nameable(name: str) -> bool:
        return "_" in name.strip("_") and len(name) >= _MIN_BY_NAME

    def _by_name(self, opt: Option) -> bool:
        """Whether a read that only has ``opt``'s name may link to it."""
        return (
            self._nameable(opt.name)
            and _library(opt)
            and (self._near is None or self.config.near(opt, self._near))
        )

    @staticmethod
    def _derived_evidence(text: str, derived: Derived, exact: bool) -> str:
        where = f"`{derived.owner}.{derived.name}()`" if derived.owner else f"`{derived.name}()`"
        chain = " -> ".join(f"`{v}`" for v in derived.via)
        verb = "calls" if exact else "has the name of"
        return (
            f"`{text}` {verb} the derived setting {where} "
            f"(`{derived.path}:{derived.line}`; {chain}), which returns `{derived.expression}`"
        )

    # ----------------------------------------------------------------- guards

    def _parse_test(self, test: str) -> ast.expr | None:
        return parse_expr(test)

    def _clause(self, node: ast.expr, reads: dict[str, Read]) -> Clause:
        def name_of(expr: ast.AST) -> tuple[str, bool] | None:
            read = self.classify(expr)
            if read is None:
                return None
            reads[read.text] = read
            return read.text, read.kind == "env"

        if (
            (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.In, ast.NotIn))
            )
            and (dotted(node.comparators[0]) or "").endswith("environ")
            and isinstance(node.left, ast.Constant)
        ):
            key = literal_text(node.left)
            if key and self.config.env_var(key):
                text = self.text(node)
                read = Read(text, "env", key, True, f"`{text}` tests whether `{key}` is set")
                op = "is not None" if isinstance(node.ops[0], ast.In) else "is None"
                return Clause(Condition(text, op, (), text, True), read)
        cond = leaf_condition(node, name_of, self.text)
        text = self.text(node)
        if cond is None or cond.name not in reads:
            return Clause(Condition(text, "truthy", (), text))
        return Clause(cond, reads[cond.name])

    def link_guard(
        self, index: int, guard: Guard, near: str | None = None, line: int | None = None
    ) -> GuardLink:
        """The clauses one guard requires (its polarity applied; cached by
        test), its options looked up near the file ``near`` (see
        :meth:`classify`; None: anywhere), in the function around ``line`` of
        that file (default: the guard's own line), whose views of the
        arguments object read settings exactly."""
        if guard.kind not in ("if", "while", "assert"):
            return GuardLink(index, guard, "all", ())
        views = self.config.views_in(near, guard.line if line is None else line)
        key = (guard.test, guard.negated, near, views)
        found = self._guards.get(key)
        if found is None:
            self._near, self._views = near, views
            found = self._guards[key] = self._link(guard)
        return GuardLink(index, guard, found[0], found[1])

    def _link(self, guard: Guard) -> tuple[Literal["all", "any"], tuple[Clause, ...]]:
        link = self._link_guard(0, guard)
        return link.mode, link.clauses

    def _link_guard(self, index: int, guard: Guard) -> GuardLink:
        expr = self._parse(guard.test)
        if expr is None:
            text = guard.test
            cond = Condition(text, "falsy" if guard.negated else "truthy", (), text)
            return GuardLink(index, guard, "all", (Clause(cond),))
        self._src = guard.test.encode("utf-8")
        reads: dict[str, Read] = {}
        if isinstance(expr, ast.BoolOp):
            parts = [self._clause(v, reads) for v in expr.values]
            mode: Literal["all", "any"] = "all" if isinstance(expr.op, ast.And) else "any"
        else:
            parts = [self._clause(expr, reads)]
            mode = "all"
        if guard.negated:
            parts = [Clause(c.condition.negated(), c.read) for c in parts]
            if len(parts) > 1:
                mode = "any" if mode == "all" else "all"
        return GuardLink(index, guard, mode, tuple(parts))

    def link_site(self, site: Site) -> tuple[GuardLink, ...]:
        return tuple(self.link_guard(i, g, site.path) for i, g in enumerate(site.guards))

    def reads_in(self, text: str, near: str | None = None, line: int = 0) -> list[Read]:
        """Every setting read inside an expression (an assignment's value:
        ``int(get_parallel().tp_size)`` reads ``tp_size``), outermost first;
        options looked up near the file ``near``, in the function around
        ``line`` of it (:meth:`link_guard`)."""
        expr = self._parse(text)
        if expr is None:
            return []
        self._src = text.encode("utf-8")
        self._near = near
        self._views = self.config.views_in(near, line)
        found: list[Read] = []
        inside: set[int] = set()
        for node in ast.walk(expr):
            if id(node) in inside:
                continue
            read = self.classify(node)
            if read is not None:
                found.append(read)
                inside.update(id(n) for n in ast.walk(node))
        return found


def _library(opt: Option) -> bool:
    """Whether ``opt`` is a setting of the library, which a name alone may
    link to: not an option of a test or a script (``--max-new-tokens`` of a
    benchmark's ``BenchArgs`` is not ``SamplingParams.max_new_tokens``)."""
    return opt.path is None or path_kind(opt.path) is None


def linked_reads(links: tuple[GuardLink, ...]) -> list[tuple[Clause, Read]]:
    """Every clause that reads a setting, with its read, in guard order."""
    return [(c, c.read) for link in links for c in link.clauses if c.read is not None]


def settings_of(links: tuple[GuardLink, ...]) -> tuple[str, ...]:
    """Targets (options, derived settings, variables) the guards read, sorted."""
    return tuple(sorted({c.read.target for g in links for c in g.clauses if c.read}))
