"""Facts of one commit beyond the raise sites, gathered once after mining.

:func:`collect` reads the commit's files (path -> bytes, given by the
pipeline) and keeps only what the card writers need: the configuration model,
the predicate functions guards call, the callers of the functions that raise,
and the repository's own exception classes. :func:`miner.analysis.analyze`
is then a pure function of the mined records and these facts.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import hashlib
import keyword as _keyword
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, NamedTuple

from miner.analysis.arguments import Argument, call_arguments
from miner.analysis.branches import Branch, exit_branches, line_depth
from miner.analysis.callers import (
    Caller,
    crowded,
    dedent,
    file_scopes,
    find_callers,
    function_spans,
    scopes_of,
    target_name,
    unmentioned,
)
from miner.analysis.code import (
    FileWords,
    SourceIndex,
    call_name,
    comment_start,
    file_imports,
    file_words,
    one_line,
    parse_expr,
    walk,
)
from miner.analysis.config import (
    ConfigModel,
    Derived,
    Option,
    Resolved,
    argparse_options,
    mine_config,
    mine_resolutions,
    predicate_function,
)
from miner.analysis.exceptions import ExceptionInfo, repo_exceptions
from miner.analysis.nested import site_nested_exits
from miner.analysis.paths import CallReach, call_reaches, first_uses, referenced
from miner.analysis.resolvers import Choice, Note, callee, guard_names, local_calls, setting_code
from miner.lifecycle import beside
from miner.model import Caught, Guard, Origin, Site, Unreachable


@dataclass(frozen=True, slots=True)
class RepoFacts:
    """What the analysis knows about the commit besides its sites."""

    config: ConfigModel = field(default_factory=ConfigModel)
    predicates: Mapping[str, Derived] = field(default_factory=dict)
    """Module-level predicate functions called with no arguments in guards, by name."""
    callers: Mapping[str, tuple[Caller, ...]] = field(default_factory=dict)
    """Callers of each raising function's name (and of their callers: two levels)."""
    crowded: Mapping[str, int] = field(default_factory=dict)
    """Names called from too many files to list -> how many files."""
    exceptions: Mapping[str, ExceptionInfo] = field(default_factory=dict)
    """The repository's own exception classes used by the errors, by short name."""
    definitions: Mapping[str, int] = field(default_factory=dict)
    """How many times each raising function's name is defined in the commit."""
    assigned: Mapping[str, tuple[Assigned, ...]] = field(default_factory=dict)
    """Where a name that guards test (``ctx.is_hybrid_ssm``) is assigned from a
    predicate call anywhere in the commit (``is_hybrid_ssm = uses_ssm_state(...)``),
    by name (:func:`predicate_assignments`)."""
    module_docs: Mapping[str, str] = field(default_factory=dict)
    """Path of a file with sites -> the first paragraph of its module docstring."""
    call_docs: Mapping[str, tuple[str, str, int]] = field(default_factory=dict)
    """Function called in a guard or exit test (defined once in the commit)
    -> (its docstring's first paragraph, path, line) (:func:`call_docstrings`)."""
    exits: Mapping[tuple[str, int], Branch] = field(default_factory=dict)
    """(path, line) of an ``exit`` or ``exit-except`` guard of a site -> how
    its branch leaves (:func:`exit_branches`, :class:`Branch`)."""
    loop_ends: Mapping[tuple[str, int], int] = field(default_factory=dict)
    """(path, line) of a ``while`` guard of a site -> the line of the
    ``raise`` the code gets to when the loop ends (:func:`loop_ends`)."""
    resolved: Mapping[str, tuple[Resolved, ...]] = field(default_factory=dict)
    """Literal values the argument-handling code stores into each setting
    (:func:`miner.analysis.config.mine_resolutions`)."""
    notes: Mapping[str, tuple[Note, ...]] = field(default_factory=dict)
    """Setting name -> comments in the functions that read or resolve it, above
    a statement using a name some guard tests (:func:`miner.analysis.resolvers.setting_code`)."""
    choices: Mapping[str, tuple[Choice, ...]] = field(default_factory=dict)
    """Setting name -> the conditional values its resolvers store into it."""
    doc_lines: Mapping[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    """(path, line) of a site with a function or class docstring -> the lines of
    its enclosing ``def`` and ``class`` (0 when not found) (:func:`header_lines`)."""
    module_doc_lines: Mapping[str, int] = field(default_factory=dict)
    """Path -> the line its module docstring starts on (for :attr:`module_docs`)."""

    # -- settings across calls (miner.analysis.paths) --
    call_reach: Mapping[tuple[str, str, int], CallReach] = field(default_factory=dict)
    """(called name, path, line) of a call in :attr:`callers` -> what it needs
    to run in its function (:func:`miner.analysis.paths.call_reaches`)."""
    uses: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    """A raising function defined once that no call names -> (path, line)
    of the first place the commit uses its name other than in a call (an
    alias, a table, a callback) (:func:`miner.analysis.paths.first_uses`)."""
    referenced: frozenset[str] = frozenset()
    """Called names also used other than in calls: their callers may be
    incomplete (:func:`miner.analysis.paths.referenced`)."""
    unmentioned: frozenset[str] = frozenset()
    """Raising functions' names no file mentions but by their ``def``: no
    in-tree code calls them (:func:`miner.analysis.callers.unmentioned`)."""
    optional_imports: Mapping[tuple[str, str], OptionalImport] = field(default_factory=dict)
    """(path, name) -> the module-level name of a file with sites that is
    ``None`` or ``False`` when an import fails (:func:`optional_imports`)."""
    module_values: Mapping[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    """(path, name) -> (line, value as written) of the one module-level
    assignment of a name the guards of that file's sites test
    (:func:`module_values`)."""
    nested_exits: Mapping[tuple[str, int], tuple[Guard, ...]] = field(default_factory=dict)
    """(path, line) of a site -> the exits nested in earlier ``if`` branches
    that it gets past and the mined exits leave out
    (:func:`miner.analysis.nested.site_nested_exits`)."""
    local_binds: Mapping[tuple[str, str, str], tuple[int, ...]] = field(default_factory=dict)
    """(path, scope, name) -> the lines where the function ``scope`` of
    ``path`` itself binds ``name`` (an assignment, augmented, annotated,
    unpacked or ``:=``, a ``for`` or ``as`` target; not a parameter), for
    the bare names sites' guards test that :attr:`assigned` has: such a name
    is a local of that function, which no assignment in another function
    binds (:func:`local_bindings`)."""
    self_calls: Mapping[tuple[str, str], tuple[Caller, ...]] = field(default_factory=dict)
    """(path, ``__qualname__``) of a raising method whose name the commit
    defines more than once -> the calls ``self.name(`` / ``cls.name(`` in
    the methods of the same class (:func:`same_class_calls`; each
    :class:`Caller`'s target is the call as written, ``self.name``):
    callers found although the name alone resolves none."""
    local_values: Mapping[tuple[str, str, str], tuple[LocalValue, ...]] = field(
        default_factory=dict
    )
    """(path, scope, name) -> every binding of a bare name the guards of the
    function's sites test, in that function, with the value assigned when
    it is a plain assignment (:func:`local_values`): where a local above
    the excerpt gets its value, and whether it is a ``bool``."""
    booleans: frozenset[str] = frozenset()
    """Names the guards test that the commit only declares as ``bool``
    (:func:`boolean_names`): ``x`` / ``obj.x`` is true or false, not truthy."""
    foreign: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Path of a file with sites -> the names its imports bind to modules
    outside the repository (``symm_mem`` for ``from torch.distributed import
    _symmetric_memory as symm_mem``): a call ``symm_mem.get_backend()`` is
    not the repository's ``get_backend`` (:func:`foreign_names`)."""

    decorators: Mapping[tuple[str, str], tuple[Decorator, ...]] = field(default_factory=dict)
    """(path, ``__qualname__``) of a raising function -> the decorators above
    its ``def``, top first (:func:`function_decorators`): what may call a
    function no call names (a route, a validator, a registry)."""

    arguments: Mapping[tuple[str, str, str], tuple[Argument, ...]] = field(default_factory=dict)
    """(path, ``__qualname__``, parameter) of a raising function -> what each
    of its calls gives that parameter, which its guards test
    (:func:`miner.analysis.arguments.call_arguments`)."""

    origins: Mapping[str, tuple[Origin, ...]] = field(default_factory=dict)
    """Error id -> what its primary site's condition and message read,
    traced to origins (:func:`miner.analysis.origins.trace_origins`; empty
    until that stage ran)."""
    logged: Mapping[str, Caught] = field(default_factory=dict)
    """Error id -> the handler that catches its exception without
    re-raising it (:mod:`miner.analysis.origins.caught`)."""
    unreachable: Mapping[str, Unreachable] = field(default_factory=dict)
    """Error id -> why no in-tree call reaches its primary site
    (:func:`miner.analysis.origins.site_unreachable`; empty without ``--origins``)."""

    def to_json(self) -> dict[str, Any]:
        return self.config.to_json()


@dataclass(frozen=True, slots=True)
class Assigned:
    """``name = value`` at ``path:line``, the value a predicate call."""

    name: str
    value: str
    path: str
    line: int
    attribute: bool = False
    """Written ``self.name = ...`` (an attribute of the instance)."""
    scope: str = "<module>"
    """The ``__qualname__`` of the scope the assignment is in."""

    def may_bind(self, written: str, path: str, scope: str) -> bool:
        """Whether this assignment may give ``written`` (the name as a guard
        in the function ``scope`` of the file ``path`` writes it: ``self.x``,
        ``ctx.x`` or ``x``) its value: ``self.x`` an attribute set in the
        same class; ``ctx.x`` any assignment (an attribute, or a local
        passed on to the object's constructor, as ``is_hybrid_ssm =
        uses_ssm_state(...)`` becomes ``ctx.is_hybrid_ssm``); a bare ``x`` a
        name of the same file (at module level, in the same function, or a
        local passed on by keyword to the function's parameter of that name,
        as ``is_dsv4_model=is_dsv4_model`` in kv_cache_configurator.py).
        An assignment in another file binds no ``self.x`` nor ``x``."""
        owner, _, _ = written.rpartition(".")
        if self.path != path and owner in ("", "self"):
            return False
        if owner == "self":
            return self.attribute and _class_of(self.scope) == _class_of(scope)
        if owner:
            return True
        return not self.attribute


def _class_of(scope: str) -> str:
    """The class part of a method's ``__qualname__`` (``A.B.f`` -> ``A.B``)."""
    return scope.rsplit(".", 1)[0] if "." in scope else ""


#: An assignment of a predicate call: ``[self.]name = [mod.]is_x(...)`` (also
#: ``uses_``, ``has_``, ``supports_``, ``use_``, ``can_``, ``should_``, ``needs_``).
_PREDICATE_ASSIGN = re.compile(
    rb"^[ \t]*(self\.)?([A-Za-z_]\w*)[ \t]*(?::[^=\n]+)?=[ \t]*"
    rb"([\w.]*\b(?:uses|is|has|supports|use|can|should|needs)_\w*\(.*)$",
    re.M,
)
#: Most distinct values kept per name (more: the name says nothing by itself).
MAX_ASSIGNED = 2
_TESTED_NAME = re.compile(
    r"(?<![\w.])(?:\w+\.)*((?:is|has|use|uses|enable|supports?|can|needs?)_\w+)"
)


def tested_names(sites: Iterable[Site], pattern: re.Pattern[str] = _TESTED_NAME) -> set[str]:
    """Flag-like names (``is_hybrid_ssm``) the guards and exits of ``sites``
    test (``pattern``: what else to find in their tests, group 1 if any)."""
    names: set[str] = set()
    for site in sites:
        for guard in (*site.guards, *site.exits):
            names.update(pattern.findall(guard.test))
    return names


def predicate_assignments(
    files: Mapping[str, bytes], names: set[str], index: SourceIndex | None = None
) -> dict[str, tuple[Assigned, ...]]:
    """For each of ``names``, where the commit assigns it a predicate call
    (one byte-regex pass over the files); names assigned more than
    :data:`MAX_ASSIGNED` different values are left out. With the ``index``
    of ``files``, only the files where one of ``names`` is a word not
    called (:meth:`SourceIndex.mentions_of`: an assignment's target is) are
    read, the same result."""
    found: dict[str, list[Assigned]] = {}
    some: set[str] | None = None
    if index is not None:
        some = {path for paths in index.mentions_of(names).values() for path in paths}
    for path, data in files.items():
        if some is not None and path not in some:
            continue
        scope_at: Callable[[int], str] | None = None
        for m in _PREDICATE_ASSIGN.finditer(data):
            name = m.group(2).decode("ascii", "replace")
            if name not in names:
                continue
            value = " ".join(m.group(3).decode("utf-8", "replace").split())
            if value.endswith(","):
                continue  # ``name=call(...),``: a keyword argument of a call over several lines
            try:
                node = ast.parse(value, mode="eval").body
            except (SyntaxError, ValueError, RecursionError):
                continue
            if not isinstance(node, ast.Call):
                continue
            line = data.count(b"\n", 0, m.start()) + 1
            if scope_at is None:
                scope_at = scopes_of(data)
            found.setdefault(name, []).append(
                Assigned(name, value, path, line, bool(m.group(1)), scope_at(m.start(2)))
            )
    out = {}
    for name, items in sorted(found.items()):
        if len({a.value for a in items}) <= MAX_ASSIGNED:
            out[name] = tuple(items)
    return out


#: Statements that go on to the next one (a call may raise, but does not leave).
_STRAIGHT = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Pass, ast.Delete)


def same_class_calls(
    files: Mapping[str, bytes], sites: Iterable[Site], definitions: Mapping[str, int]
) -> dict[tuple[str, str], tuple[Caller, ...]]:
    """For each site in a method ``Cls.name`` whose ``name`` the commit
    defines more than once (``definitions``): the lines of its file that call
    ``self.name(`` or ``cls.name(`` inside another method of ``Cls`` (the
    scope of each call from the ``def``/``class`` lines and indentation, no
    parse), in line order. Keyed by (path, the method's ``__qualname__``)."""
    wanted: dict[str, set[str]] = {}
    for site in sites:
        name = target_name(site.scope)
        owner, _, last = site.scope.rpartition(".")
        if name is None or name != last or not owner or "<locals>" in site.scope:
            continue
        if definitions.get(name, 0) > 1:
            wanted.setdefault(site.path, set()).add(site.scope)
    out: dict[tuple[str, str], tuple[Caller, ...]] = {}
    for path, scopes in sorted(wanted.items()):
        data = files.get(path)
        if data is None:
            continue
        scope_at = scopes_of(data)
        for qualname in sorted(scopes):
            owner, _, name = qualname.rpartition(".")
            found = []
            for start, caller in _self_calls(data, name):
                line_start = data.rfind(b"\n", 0, start) + 1
                if comment_start(data[line_start:start].decode("utf-8", "replace")) >= 0:
                    continue
                scope = scope_at(start)
                if scope.rpartition(".")[0] == owner and scope != qualname:
                    line = data.count(b"\n", 0, start) + 1
                    found.append(Caller(f"{caller}.{name}", scope, path, line))
            if found:
                out[(path, qualname)] = tuple(found)
    return out


def _self_calls(data: bytes, name: str) -> Iterator[tuple[int, str]]:
    """(offset, ``self`` or ``cls``) of each ``self.name(`` / ``cls.name(`` of
    ``data`` (``\\b(self|cls)\\.name[ \\t]*\\(``), found from ``.name``: a
    pattern starting with a literal, which the engine skips to."""
    for m in re.finditer(rb"\.%s[ \t]*\(" % re.escape(name.encode()), data):
        dot = m.start()
        for word in ("self", "cls"):
            start = dot - len(word)
            if start >= 0 and data[start:dot] == word.encode() and not _word_at(data, start - 1):
                yield start, word
                break


def _word_at(data: bytes, at: int) -> bool:
    """Whether ``data[at]`` is a word byte (``[A-Za-z0-9_]``); False before the start."""
    return at >= 0 and (data[at : at + 1].isalnum() or data[at : at + 1] == b"_")


def loop_ends(index: SourceIndex, sites: Iterable[Site]) -> dict[tuple[str, int], int]:
    """For each ``while`` guard of ``sites`` (a loop without ``else``): the
    line of the ``raise`` its end leads to, when the statements after the
    loop (and after the ``with`` blocks around it) are plain statements
    ending in that ``raise``. A site inside such a loop is reached only
    while the loop's test holds, and the test failing is another error
    (``while ... < timeout: ...`` then ``raise TimeoutError``), not a way
    out. Keyed by (path, the ``while`` line)."""
    wanted: dict[str, set[int]] = {}
    for site in sites:
        for guard in site.guards:
            if guard.kind == "while" and not guard.negated:
                wanted.setdefault(site.path, set()).add(guard.line)
    out: dict[tuple[str, int], int] = {}
    for path, numbers in sorted(wanted.items()):
        tree = index.tree(path)
        if tree is None:
            continue
        places: dict[int, tuple[ast.AST, list[ast.stmt], int]] = {}  # id -> (parent, block, index)
        loops: list[ast.While] = []
        # statements only (no expression is walked): a tenth of ast.walk
        stack: list[ast.AST] = [tree]
        while stack:
            parent = stack.pop()
            for block in _blocks(parent):
                for i, stmt in enumerate(block):
                    places[id(stmt)] = (parent, block, i)
                    stack.append(stmt)
                    if isinstance(stmt, ast.While) and stmt.lineno in numbers:
                        loops.append(stmt)
        for loop in loops:
            line = 0 if loop.orelse else _raise_after(loop, places)
            if line:
                out[(path, loop.lineno)] = line
    return out


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists directly under ``node`` (bodies, ``else``,
    ``finally``, handlers' and cases' bodies)."""
    out = [
        block
        for name in ("body", "orelse", "finalbody")
        if isinstance(block := getattr(node, name, None), list)
    ]
    for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
        out.append(part.body)
    return out


def _raise_after(node: ast.stmt, places: Mapping[int, tuple[ast.AST, list[ast.stmt], int]]) -> int:
    """The line of the ``raise`` that the statements after ``node`` get to
    (leaving the ``with`` blocks it ends), or 0."""
    while id(node) in places:
        parent, block, i = places[id(node)]
        for stmt in block[i + 1 :]:
            if isinstance(stmt, ast.Raise):
                return stmt.lineno
            if not isinstance(stmt, _STRAIGHT):
                return 0
        if not isinstance(parent, (ast.With, ast.AsyncWith)) or block is not parent.body:
            return 0
        node = parent
    return 0


@dataclass(frozen=True, slots=True)
class OptionalImport:
    """A module-level name bound in a ``try`` that imports third-party
    modules, set to ``None`` or ``False`` by its ``except ImportError``
    handler instead (``try: import torchaudio`` / ``except ImportError:
    torchaudio = None``): the name has that value when the import failed as
    the module was loaded."""

    name: str
    value: str
    """``"None"`` or ``"False"``: what the handler sets."""
    modules: tuple[str, ...]
    """The modules the ``try`` body imports by absolute name, in order."""
    packages: tuple[str, ...]
    """The top-level modules among them that are not the repository's own
    (``torchaudio`` for ``torchaudio.transforms``): what to install."""
    statements: tuple[str, ...]
    """The ``try`` body's imports of those packages as one-line statements
    (``from flashinfer import fp4_quantize, mm_fp4``): running them shows
    whether the installed version provides every name the code imports."""
    path: str
    try_line: int
    handler_line: int


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
#: A name not after a dot (the names a test may read from the module).
_BARE_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
#: A module-level ``except`` clause naming an import error, and its block.
_IMPORT_HANDLER = re.compile(
    rb"^except\b[^\n#]*(?:ImportError|ModuleNotFoundError)[^\n#]*:[ \t]*(?:#[^\n]*)?\r?\n"
    rb"((?:(?:[ \t]+[^\n]*)?\r?\n)*)",
    re.M,
)
_NAME_SET = re.compile(rb"^[ \t]+([A-Za-z_]\w*)[ \t]*=[ \t]*(?:None|False)[ \t]*(?:#.*)?$", re.M)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        isinstance(k, ast.Name)
        and k.id in _IMPORT_ERRORS
        or isinstance(k, ast.Attribute)
        and k.attr in _IMPORT_ERRORS
        for k in kinds
        if k is not None
    )


def _bindings(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """Every node that binds each name anywhere in the module: assignment
    targets, imports, parameters, ``def`` and ``class`` names, ``global``."""
    out: dict[str, list[ast.AST]] = {}
    for node in walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.setdefault(node.id, []).append(node)
        elif isinstance(node, ast.arg):
            out.setdefault(node.arg, []).append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out.setdefault(alias.asname or alias.name.split(".")[0], []).append(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                out.setdefault(name, []).append(node)
    return out


def module_optional_imports(
    path: str, tree: ast.Module, local: frozenset[str]
) -> dict[str, OptionalImport]:
    """The :class:`OptionalImport` names of one module, by name. A name
    qualifies when a module-level ``try`` binds it only by importing a
    third-party module or by assigning it a constant that is neither
    ``None`` nor ``False`` (``HAS_X = True``), its ``except ImportError``
    (or ``ModuleNotFoundError``) handler sets it to ``None`` or ``False``,
    and nothing else in the module binds it (no other assignment, parameter,
    ``def``, import or ``global`` of the name, which could give it another
    value): then it has that value exactly when the ``try`` failed to
    import. ``local`` are the top-level packages of the repository, whose
    imports name no package to install."""
    bindings = _bindings(tree)
    out: dict[str, OptionalImport] = {}
    for node in tree.body:
        if not isinstance(node, ast.Try):
            continue
        tried = _tried_imports(node, local)
        if not tried.packages:
            continue
        inside = {id(n) for statement in node.body for n in walk(statement)}
        for handler in node.handlers:
            if not _catches_import_error(handler):
                continue
            for target, value in _fallbacks(handler):
                bound = [b for b in bindings.get(target.id, []) if b is not target]
                if not bound or any(id(b) not in inside or id(b) not in tried.sure for b in bound):
                    continue
                out[target.id] = OptionalImport(
                    target.id,
                    value,
                    tried.modules,
                    tried.packages,
                    tried.statements,
                    path,
                    node.lineno,
                    handler.lineno,
                )
    return out


class _Tried(NamedTuple):
    """What a ``try`` body imports (:func:`_tried_imports`)."""

    modules: tuple[str, ...]
    """Every module it imports, in order, once each."""
    packages: tuple[str, ...]
    """Their top-level packages that are not the repository's."""
    statements: tuple[str, ...]
    """The import statements of those packages, as written (once each)."""
    sure: set[int]
    """The ids of the nodes binding a name when the imports succeed: the
    imports of outside packages only, and constants neither None nor False."""


def _tried_imports(node: ast.Try, local: frozenset[str]) -> _Tried:
    """The imports of the body of the module-level ``try`` ``node``
    (``local``: the repository's top-level packages)."""
    modules: list[str] = []
    statements: list[str] = []
    sure: set[int] = set()
    for statement in node.body:
        if isinstance(statement, ast.Import):
            modules += [a.name for a in statement.names]
            outside = [a for a in statement.names if a.name.split(".")[0] not in local]
            if outside:
                statements.append(ast.unparse(ast.Import(names=outside)))
            if len(outside) == len(statement.names):
                sure.add(id(statement))
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
            module = statement.module or ""
            modules.append(module)
            if module.split(".")[0] not in local:
                statements.append(ast.unparse(statement))
                sure.add(id(statement))
        elif (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Constant)
            and statement.value.value is not None
            and statement.value.value is not False
        ):
            sure.update(id(t) for t in statement.targets if isinstance(t, ast.Name))
    unique = list(dict.fromkeys(modules))
    tops = dict.fromkeys(m.split(".")[0] for m in unique)
    packages = tuple(top for top in tops if top not in local)
    return _Tried(tuple(unique), packages, tuple(dict.fromkeys(statements)), sure)


def _fallbacks(handler: ast.ExceptHandler) -> Iterator[tuple[ast.Name, str]]:
    """(name, ``"None"`` or ``"False"``) for each name the handler's
    top-level statements set to ``None`` or ``False``."""
    for statement in handler.body:
        if not (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Constant)
            and (statement.value.value is None or statement.value.value is False)
        ):
            continue
        value = "None" if statement.value.value is None else "False"
        for target in statement.targets:
            if isinstance(target, ast.Name):
                yield target, value


def optional_imports(
    files: Mapping[str, bytes], tested: Mapping[str, set[str]]
) -> dict[tuple[str, str], OptionalImport]:
    """:func:`module_optional_imports` of the files whose sites' guards or
    exits test (``tested``: :func:`tested_bare_names`) a bare name that the
    file sets to ``None`` or ``False`` in a module-level ``except`` block
    naming an import error (a byte-regex pass first; only those files are
    parsed)."""
    local = frozenset(part for path in files for part in path.split("/")[:-1])
    out: dict[tuple[str, str], OptionalImport] = {}
    for path, names in sorted(tested.items()):
        data = files.get(path)
        if data is None or (b"ImportError" not in data and b"ModuleNotFoundError" not in data):
            continue
        set_there = {
            m.group(1).decode("ascii", "replace")
            for block in _IMPORT_HANDLER.finditer(data)
            for m in _NAME_SET.finditer(block.group(1))
        }
        if not names & set_there:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for name, found in module_optional_imports(path, tree, local).items():
            if name in names:
                out[(path, name)] = found
    return out


#: ``name = value`` (or ``name: T = value``) at column 0: a module-level assignment.
_MODULE_ASSIGN = re.compile(rb"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*([^\n]*)$", re.M)
#: Longest value shown (characters, whitespace collapsed).
MAX_MODULE_VALUE = 100


def tested_bare_names(sites: Iterable[Site]) -> dict[str, set[str]]:
    """Path -> the bare names (not after a dot) the guards and exits of its sites test."""
    tested: dict[str, set[str]] = {}
    for site in sites:
        for guard in (*site.guards, *site.exits):
            tested.setdefault(site.path, set()).update(_BARE_NAME.findall(guard.test))
    return tested


def module_values(
    files: Mapping[str, bytes], tested: Mapping[str, set[str]]
) -> dict[tuple[str, str], tuple[int, str]]:
    """(path, name) -> (line, value) of the names the guards of a file's sites
    test (``tested``: :func:`tested_bare_names`) that the file binds once,
    at column 0 (``after_2_8_0 = torch_release >= (2, 8)``), and nowhere
    else (:func:`binding_line`): what the module sets them to when it is loaded;
    containers it may fill later are left out (:func:`_mutable`). The value
    is the expression as written, continued over at most four lines,
    joined as :func:`_expression` does; left out when it is longer than
    :data:`MAX_MODULE_VALUE` or does not parse. A byte regex pass: no file
    is parsed whole."""
    out: dict[tuple[str, str], tuple[int, str]] = {}
    for path, names in sorted(tested.items()):
        data = files.get(path)
        if data is None:
            continue
        found: dict[str, list[re.Match[bytes]]] = {}
        for m in _MODULE_ASSIGN.finditer(data):
            name = m.group(1).decode("ascii", "replace")
            if name in names:
                found.setdefault(name, []).append(m)
        for name, matches in sorted(found.items()):
            if len(matches) != 1 or _bindings_of(name, data) != 1:
                continue
            m = matches[0]
            line = data.count(b"\n", 0, m.start()) + 1
            value = _expression(data[m.start(2) :].decode("utf-8", "replace").split("\n")[:5])
            if value is not None and not _mutable(value):
                out[(path, name)] = (line, value)
    return out


@lru_cache(maxsize=4096)
def _local_binding(name: str) -> re.Pattern[bytes]:
    """What binds ``name`` in a function's body on one line: the assignments
    and targets of :func:`binding_line`, not a parameter nor a ``def``,
    ``import`` or ``global`` of it."""
    n = re.escape(name.encode())
    return re.compile(
        rb"^[ \t]*\**" + n + rb"[ \t]*(?::[^=\n]+)?(?:[-+*/%&|^@]|//|\*\*|>>|<<)?=(?!=)"
        rb"|^[ \t]*\(?[ \t]*(?:[\w.*]+[ \t]*,[ \t]*)+" + n + rb"[ \t]*(?:,[^=\n]*)?\)?[ \t]*=(?!=)"
        rb"|^[ \t]*\(?[ \t]*\**" + n + rb"[ \t]*,[^=\n]*=(?!=)"
        rb"|\b" + n + rb"[ \t]*:=(?!=)"
        rb"|^[ \t]*(?:async[ \t]+)?for[ \t].*\b" + n + rb"\b.*\bin\b"
        rb"|\bas[ \t]+" + n + rb"\b"
    )


def local_bindings(
    files: Mapping[str, bytes], sites: Iterable[Site], names: Iterable[str]
) -> dict[tuple[str, str, str], tuple[int, ...]]:
    """(path, scope, name) -> the lines where the site's function binds
    ``name`` itself (:func:`_local_binding`, read line by line; the scope
    of each line from the ``def`` / ``class`` lines and indentation,
    :func:`~miner.analysis.callers.scopes_of`), for each site whose guards
    or exits test one of ``names`` as a bare name. A byte pass over the
    lines that hold the name: no file is parsed."""
    wanted = frozenset(names)
    per_path: dict[str, set[tuple[str, str]]] = {}
    for site in sites:
        if site.scope == "<module>":
            continue
        for guard in (*site.guards, *site.exits):
            for name in _BARE_NAME.findall(guard.test):
                if name in wanted:
                    per_path.setdefault(site.path, set()).add((site.scope, name))
    out: dict[tuple[str, str, str], tuple[int, ...]] = {}
    for path, pairs in sorted(per_path.items()):
        data = files.get(path)
        if data is None:
            continue
        scope_at = scopes_of(data)
        for name in sorted({name for _, name in pairs}):
            scopes = {scope for scope, n in pairs if n == name}
            pattern, needle = _local_binding(name), name.encode()
            at = data.find(needle)
            while at >= 0:
                start = data.rfind(b"\n", 0, at) + 1
                end = data.find(b"\n", at)
                end = len(data) if end < 0 else end
                if pattern.search(data[start:end]):
                    scope = scope_at(at)
                    if scope in scopes:
                        key = (path, scope, name)
                        line = data.count(b"\n", 0, start) + 1
                        out[key] = (*out.get(key, ()), line)
                at = data.find(needle, end)
    return out


class LocalValue(NamedTuple):
    """One binding of a name in a function (:func:`local_values`)."""

    start: int
    """The line of the function's ``def``."""
    line: int
    value: str
    """The assigned expression, on one line (:func:`assigned_expr`); ``""``
    for any other binding: a parameter, a loop or ``as`` target, an
    augmented, annotated-only or unpacked assignment, a value that does not
    parse within five lines."""
    boolean: bool
    """The value is always a ``bool`` (:func:`boolean_expr`)."""
    end: int = 0
    """The first line after the block holding the binding (the next code
    line indented less), 0 when the block runs to the function's end: a test
    at or after ``end`` may be reached without this binding running (it sat
    in an ``if`` or ``else`` branch, a loop, a ``try``)."""


#: Bare names in tests that are never a function's own variable.
_NOT_LOCAL = frozenset(_keyword.kwlist) | frozenset(dir(builtins)) | {"self", "cls"}
#: ``name = value`` / ``name: T = value`` at the start of a line: (name, value).
_PLAIN_ASSIGN = re.compile(rb"[ \t]*(\w+)[ \t]*(?::[^=\n]+)?=(?!=)[ \t]*(.*)")
#: Builtins whose call is a ``bool``.
_BOOL_CALLS = frozenset({"bool", "isinstance", "issubclass", "hasattr", "callable", "any", "all"})
#: Methods of ``str``, ``os.path`` and ``pathlib.Path`` that return a ``bool``.
_BOOL_METHODS = frozenset(
    {
        "startswith",
        "endswith",
        "isdigit",
        "isalpha",
        "isalnum",
        "isnumeric",
        "isdecimal",
        "isidentifier",
        "islower",
        "isupper",
        "isspace",
        "exists",
        "isfile",
        "isdir",
        "isabs",
        "is_file",
        "is_dir",
        "is_absolute",
    }
)


def boolean_expr(node: ast.expr) -> bool:
    """Whether the expression's value is a ``bool`` on every path: ``True`` or
    ``False``, a comparison, a ``not``, a call of ``bool``, ``isinstance``,
    ``hasattr`` and the like or of a predicate method of ``str`` / ``os.path``
    / ``Path`` (``.startswith``, ``.exists``), or an ``and`` / ``or`` of
    those (Python's ``and`` returns an operand: all must be ``bool``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bool)
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    if isinstance(node, ast.BoolOp):
        return all(boolean_expr(v) for v in node.values)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return node.func.id in _BOOL_CALLS
        if isinstance(node.func, ast.Attribute):
            return node.func.attr in _BOOL_METHODS
    return False


def assigned_expr(texts: Sequence[str]) -> tuple[str, ast.expr] | None:
    """The expression an assignment stores: ``texts[0]`` is what follows the
    ``=`` on its line, the rest the lines after it, joined on while the text
    does not parse (five lines at most; a ``#`` comment after two spaces
    dropped). (the text on one line: as written when it fits its line, else
    ``ast.unparse``; the tree), or None when it does not parse."""
    value = texts[0].split("  #")[0].strip()
    for extra in range(1, 6):
        try:
            node = ast.parse(value.rstrip(","), mode="eval").body
        except (SyntaxError, ValueError, RecursionError):
            more = texts[extra] if extra < len(texts) else ""
            value += " " + more.split("  #")[0].strip()
            continue
        text = " ".join(value.rstrip(",").split()) if extra == 1 else ast.unparse(node)
        return text, node
    return None


def local_values(
    files: Mapping[str, bytes], sites: Iterable[Site]
) -> dict[tuple[str, str, str], tuple[LocalValue, ...]]:
    """(path, scope, name) -> the bindings of ``name`` in the function
    ``scope`` of ``path`` above the excerpts of its sites (its signature and
    body, nested functions included), in line order, for the bare names the
    guards and exits of those sites test (keywords, builtins, ``self`` and
    ``cls`` aside). Only sites whose excerpt does not show their ``def``
    count: what an excerpt shows, the cards read from it.

    The function is the ``def`` of that ``__qualname__`` around a site
    (:func:`~miner.analysis.callers.function_spans`; a name defined twice
    gives both, told apart by :attr:`LocalValue.start`). A binding is a line
    binding the name (:func:`_bound_names`) outside brackets (a keyword
    argument on its own line binds nothing); any mention in the signature is
    a parameter. Read line by line: no file is parsed, only the assigned
    expressions (:func:`assigned_expr`)."""
    wanted: dict[str, dict[str, tuple[set[int], set[str], list[int]]]] = {}
    for site in sites:
        if site.scope == "<module>":
            continue
        names = {n for g in (*site.guards, *site.exits) for n in _BARE_NAME.findall(g.test)}
        names -= _NOT_LOCAL
        if not names or _shows_def(site):
            continue
        lines, have, upto = wanted.setdefault(site.path, {}).setdefault(
            site.scope, (set(), set(), [0])
        )
        lines.add(site.line)
        have.update(names)
        upto[0] = max(upto[0], site.excerpt.start_line)
    out: dict[tuple[str, str, str], tuple[LocalValue, ...]] = {}
    for path, scopes in sorted(wanted.items()):
        data = files.get(path)
        if data is None:
            continue
        starts = [0]
        starts.extend(m.end() for m in re.finditer(rb"\n", data))
        spans: dict[str, list[tuple[int, int]]] = {}
        for name, start, end in function_spans(data):
            if name in scopes:
                spans.setdefault(name, []).append((start, end))
        for scope, (found_lines, names, upto) in sorted(scopes.items()):
            site_lines = sorted(found_lines)
            for start, end in spans.get(scope, ()):
                first = bisect.bisect_right(starts, start)
                last = bisect.bisect_right(starts, max(end - 1, start))
                at = bisect.bisect_left(site_lines, first)
                if at == len(site_lines) or site_lines[at] > last:
                    continue
                stop = starts[min(upto[0], last) - 1] if upto[0] > first else end
                body = data[start:stop].split(b"\n")
                for name, found in _function_bindings(body, first, names):
                    key = (path, scope, name)
                    ends = tuple(_with_end(v, data, starts, end) for v in found)
                    out[key] = (*out.get(key, ()), *ends)
    return out


def _with_end(value: LocalValue, data: bytes, starts: list[int], end: int) -> LocalValue:
    """``value`` with :attr:`LocalValue.end`: the next code line of the
    function (it ends at offset ``end`` of ``data``; ``starts``: the offset
    of each line) indented less than the binding's line (not a blank line, a
    comment or a closing bracket: :func:`~miner.analysis.callers.dedent`)."""
    if value.line == value.start or value.line >= len(starts):
        return value  # a parameter: bound before any test
    at = starts[value.line - 1]
    text = data[at : starts[value.line]]
    indent = len(text) - len(text.lstrip(b" \t"))
    if indent == 0:
        return value
    found = dedent(indent - 1).search(data, starts[value.line], end)
    if found is None:
        return value
    return value._replace(end=bisect.bisect_right(starts, found.start()))


def _shows_def(site: Site) -> bool:
    """Whether the site's excerpt shows the ``def`` of its function."""
    return site.scope.rsplit(".", 1)[-1] in _DEF_NAME.findall(site.excerpt.text)


_DEF_NAME = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)


#: The targets of an assignment line (also annotated, augmented or unpacked).
_BOUND_TARGETS = re.compile(
    rb"[ \t]*\(?[ \t]*((?:\*?\w+[ \t]*,[ \t]*)*\*?\w+)[ \t]*,?[ \t]*\)?[ \t]*"
    rb"(?::[^=\n]*)?(?:[-+*/%&|^@]|//|\*\*|>>|<<)?=(?!=)"
)
#: Other ways a line binds names: ``:=``, ``for`` / ``as`` targets, ``def`` /
#: ``class``, ``import``, ``global`` / ``nonlocal``.
_BOUND_OTHER = re.compile(
    rb"(\w+)[ \t]*:=|\bfor[ \t]+([\w, ()*]+?)[ \t]+in\b|\bas[ \t]+(\w+)"
    rb"|^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)"
    rb"|^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+(.+)|^[ \t]*(?:global|nonlocal)[ \t]+(.+)"
)
_WORD = re.compile(rb"\w+")


def _bracket_depth(text: bytes) -> int:
    """:func:`line_depth` of a line as bytes, counted in C when the line has no
    string or comment."""
    if b"'" in text or b'"' in text or b"#" in text:
        return line_depth(text.decode("utf-8", "replace"))
    opened = text.count(b"(") + text.count(b"[") + text.count(b"{")
    return opened - text.count(b")") - text.count(b"]") - text.count(b"}")


def _bound_names(text: bytes) -> set[bytes]:
    """The names a line of a function's body may bind (over-approximated)."""
    names: set[bytes] = set()
    m = _BOUND_TARGETS.match(text)
    if m is not None:
        names.update(_WORD.findall(m.group(1)))
    for m in _BOUND_OTHER.finditer(text):
        for group in m.groups():
            if group:
                names.update(_WORD.findall(group))
    return names


def _function_bindings(
    lines: list[bytes], first: int, names: set[str]
) -> Iterable[tuple[str, tuple[LocalValue, ...]]]:
    """For each of ``names`` bound in the function whose lines are ``lines``
    (its ``def`` on line ``first``), its :class:`LocalValue` s
    (:func:`local_values`). Each line is read once (no pattern per name)."""
    wanted = {n.encode() for n in names}
    found: dict[bytes, list[LocalValue]] = {}
    depth = 0
    body = False
    quoted = False
    for i, text in enumerate(lines):
        inside, opened = quoted, depth
        quotes = text.count(b'"""') + text.count(b"'''")
        if quoted or quotes:
            quoted = quoted != (quotes % 2 == 1)
        else:
            depth = max(depth + _bracket_depth(text), 0)
        # the words only of a line holding one of the names (most lines hold none)
        words = (
            wanted.intersection(_WORD.findall(text))
            if not inside and any(n in text for n in wanted)
            else ()
        )
        if not body:
            # the signature: any mention is a parameter (or its default)
            for name in words:
                found.setdefault(name, []).append(LocalValue(first, first + i, "", False))
            body = depth == 0 and text.split(b"#")[0].rstrip().endswith(b":")
            continue
        if not words or opened:
            continue  # in brackets: ``name=value,`` is a keyword argument
        bound = words & _bound_names(text)
        if not bound:
            continue
        m = _PLAIN_ASSIGN.match(text)
        for name in bound:
            value, boolean = "", False
            if m is not None and m.group(1) == name:
                texts = [t.decode("utf-8", "replace") for t in (m.group(2), *lines[i + 1 : i + 5])]
                got = assigned_expr(texts)
                if got is not None:
                    value, boolean = got[0], boolean_expr(got[1])
            found.setdefault(name, []).append(LocalValue(first, first + i, value, boolean))
    for name, items in sorted(found.items()):
        yield name.decode(), tuple(items)


@lru_cache(maxsize=4096)
def binding_line(name: str) -> re.Pattern[bytes]:
    """What may bind ``name`` on one line: an assignment (also augmented,
    annotated, unpacked or ``:=``), a ``for`` or ``as`` target, a
    ``def``/``class``/``import``/``global`` of it, a parameter of a ``def``
    on its line, or a line that starts with the name and a ``:``, ``,``,
    ``)`` or ends there (a parameter of a signature over several lines).
    Over-approximated: what it finds more than once is not shown."""
    n = re.escape(name.encode())
    return re.compile(
        rb"^[ \t]*\**" + n + rb"[ \t]*(?::|,|\)|$|(?:[-+*/%&|^@]|//|\*\*|>>|<<)?=(?!=))"
        rb"|,[ \t]*" + n + rb"[ \t]*(?:,[^=]*)?=(?!=)"
        rb"|\b" + n + rb"[ \t]*:="
        rb"|\bfor[ \t].*\b" + n + rb"\b.*\bin\b"
        rb"|\b(?:as|def|class|import|global|nonlocal)[ \t]+(?:[\w, \t]*,[ \t]*)?" + n + rb"\b"
        rb"|\bdef[ \t]+\w+[ \t]*\(.*\b" + n + rb"\b"
    )


def _bindings_of(name: str, data: bytes) -> int:
    """How many lines of ``data`` may bind ``name`` (:func:`binding_line`), read
    only on the lines that hold the name."""
    needle = name.encode()
    count, at = 0, data.find(needle)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        if binding_line(name).search(data[start:end]):  # compiled once the name is found
            count += 1
        at = data.find(needle, end)
    return count


_CONTAINERS = frozenset(
    {"set", "dict", "list", "defaultdict", "OrderedDict", "deque", "Counter", "WeakValueDictionary"}
)


def _mutable(value: str) -> bool:
    """Whether ``value`` makes a container or a lock that code may change
    later (a literal, a comprehension, ``set()``, ``defaultdict(...)``): its
    value as written says little."""
    node = parse_expr(value)
    if isinstance(node, (ast.Dict, ast.List, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp)):
        return True
    if not isinstance(node, ast.Call):
        return False
    called = call_name(node) or ""
    return called in _CONTAINERS or called.endswith(("Lock", "RLock", "Event", "Queue"))


def _expression(lines: list[str]) -> str | None:
    """The expression that starts the first of ``lines``, continued over the
    next ones until it parses (each line stripped, its comment cut, joined
    by a space but right after an opening or before a closing bracket), or
    None: unchanged when it fits on its first line."""
    text = ""
    for piece in lines:
        piece = piece.split("  #")[0].strip()
        glue = "" if not text or text[-1] in "([{" or piece[:1] in ")]}" else " "
        text = f"{text}{glue}{piece}"
        if parse_expr(text) is not None:
            return text if len(text) <= MAX_MODULE_VALUE else None
    return None


_CALLED = re.compile(r"(?<![\w])([A-Za-z_]\w*)\(")
_DOC_START = re.compile(rb"\)[^\n]*:[ \t]*\n(?:[ \t]*\n)*[ \t]*[rRuU]?(\"\"\"|\'\'\')")


_MODULE_DOC = re.compile(
    rb"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*[ \t]*[rRuU]?(\"\"\"|\'\'\')(.*?)\1", re.S
)


@dataclass(frozen=True, slots=True)
class Decorator:
    """One decorator line above a ``def``."""

    line: int
    text: str
    """As written on one line: ``@router.get("/v1/models")``; a decorator
    over several lines joined, without the spaces inside its brackets or a
    trailing comma (``@router.post("/x", response_model=None)``)."""
    pydantic: bool = False
    """The file imports ``pydantic`` (its ``model_validator`` is pydantic's)."""

    @property
    def name(self) -> str:
        """The decorator's dotted name: ``router.get``, ``model_validator``."""
        return re.split(r"[(\s]", self.text[1:], maxsplit=1)[0]


#: Decorators that wrap a function without calling it from elsewhere.
WRAPPERS = frozenset(
    {
        "abstractmethod",
        "cache",
        "cached_property",
        "classmethod",
        "contextmanager",
        "functools.cache",
        "functools.lru_cache",
        "functools.wraps",
        "lru_cache",
        "override",
        "property",
        "staticmethod",
        "torch.compile",
        "torch.inference_mode",
        "torch.no_grad",
        "typing.override",
        "wraps",
    }
)


def function_decorators(
    files: Mapping[str, bytes], sites: Iterable[Site]
) -> dict[tuple[str, str], tuple[Decorator, ...]]:
    """The decorators of each site's function (its ``def`` header nearest
    above the site, :func:`_header_at`), read from the file's lines: the run
    of lines starting with ``@`` (or continuing one) just above the ``def``.
    Functions with none are left out."""
    wanted: dict[str, dict[str, int]] = {}  # path -> scope -> its first site's line
    for site in sites:
        if site.scope != "<module>":
            scopes = wanted.setdefault(site.path, {})
            scopes[site.scope] = min(site.line, scopes.get(site.scope, site.line))
    out: dict[tuple[str, str], tuple[Decorator, ...]] = {}
    for path, scopes in sorted(wanted.items()):
        data = files.get(path, b"")
        starts = [0, *(m.end() for m in re.finditer(rb"\n", data))]
        text = data.decode("utf-8", "replace").split("\n")
        pydantic = b"pydantic" in data
        for scope, line in scopes.items():
            name = scope.split(".<locals>.")[-1].rsplit(".", 1)[-1]
            at = _header_at(data, "def", name, starts[min(line, len(starts) - 1)])
            if at < 0:
                continue
            found: list[Decorator] = []
            depth = 0  # brackets a decorator over several lines leaves open, read upwards
            last = bisect.bisect_right(starts, at) - 1  # the decorator's last line
            for number in range(last, 0, -1):
                above = text[number - 1].strip()
                depth += above.count(")") + above.count("]")
                depth -= above.count("(") + above.count("[")
                if above.startswith("@") and depth <= 0:
                    whole = one_line(" ".join(text[number - 1 : last]))
                    found.append(Decorator(number, whole, pydantic))
                    depth, last = 0, number - 1
                elif depth <= 0 and not above.startswith("#"):
                    break
            if found:
                out[(path, scope)] = tuple(reversed(found))
    return out


def header_lines(
    files: Mapping[str, bytes], sites: Iterable[Site]
) -> dict[tuple[str, int], tuple[int, int]]:
    """For each site with a function or class docstring: the lines of the
    nearest ``def <function>`` and ``class <Class>`` above it (0 when not
    found), read from the file's lines (no file is parsed)."""
    wanted: dict[str, list[Site]] = {}
    for site in sites:
        if (site.function_doc or site.class_doc) and site.scope != "<module>":
            wanted.setdefault(site.path, []).append(site)
    out: dict[tuple[str, int], tuple[int, int]] = {}
    for path, group in sorted(wanted.items()):
        data = files.get(path, b"")
        starts = [0, *(m.end() for m in re.finditer(rb"\n", data))]
        for site in group:
            scope = site.scope.split(".<locals>.")[-1]
            func = scope.rsplit(".", 1)[-1] if site.function_doc else ""
            cls = scope.split(".")[0] if site.class_doc and "." in scope else ""
            end = starts[min(site.line, len(starts) - 1)]
            found = []
            for keyword, name in (("def", func), ("class", cls)):
                at = _header_at(data, keyword, name, end) if name else -1
                found.append(bisect.bisect_right(starts, at) if at >= 0 else 0)
            out[(site.path, site.line)] = (found[0], found[1])
    return out


def _header_at(data: bytes, keyword: str, name: str, end: int) -> int:
    """Offset of the last ``def name`` / ``class name`` header starting a line before ``end``."""
    needle = f"{keyword} {name}".encode()
    at = data.rfind(needle, 0, end)
    while at >= 0:
        line_start = data.rfind(b"\n", 0, at) + 1
        after = data[at + len(needle) : at + len(needle) + 1]
        head = data[line_start:at].strip()
        if after in (b"(", b":", b"[") and head in (b"", b"async"):
            return at
        at = data.rfind(needle, 0, at)
    return -1


def module_docstrings(files: Mapping[str, bytes], paths: Iterable[str]) -> dict[str, str]:
    """The first paragraph of the module docstring of each of ``paths`` (a
    byte match at the top of the file: no file is parsed)."""
    out = {}
    for path in sorted(set(paths)):
        m = _MODULE_DOC.match(files.get(path, b"")[:20000])
        if m is None:
            continue
        text = m.group(2).decode("utf-8", "replace").strip()
        first = " ".join(text.split("\n\n", 1)[0].split())
        if first:
            out[path] = first
    return out


def foreign_names(index: SourceIndex, paths: Iterable[str]) -> dict[str, frozenset[str]]:
    """For each of ``paths``: the names its import statements bind to a
    module whose top-level package is not one of the repository's (read
    by :func:`~miner.analysis.code.file_imports`, no parse; a
    relative import is the repository's)."""
    own = {index.module_name(p).split(".")[0] for p in index.files}
    out: dict[str, frozenset[str]] = {}
    for path in sorted(set(paths)):
        names = set()
        for module, pairs in file_imports(index.files.get(path, b"")):
            for name, bound in pairs:
                top = (module if module is not None else name).split(".")[0]
                if top and top not in own and name != "*":
                    names.add(bound)
        if names:
            out[path] = frozenset(names)
    return out


def called_names(sites: Iterable[Site]) -> set[str]:
    """Names of the functions called in the guard and exit tests of ``sites``."""
    names: set[str] = set()
    for site in sites:
        for guard in (*site.guards, *site.exits):
            if "(" in guard.test:
                names.update(_CALLED.findall(guard.test))
    return names


def call_docstrings(index: SourceIndex, names: Iterable[str]) -> dict[str, tuple[str, str, int]]:
    """The docstring of each function of ``names`` defined exactly once in the
    commit (found by a byte search from its ``def``: no file is parsed)."""
    out: dict[str, tuple[str, str, int]] = {}
    for name in sorted(names):
        paths = index.definitions(name)
        if len(paths) != 1 or name in ("isinstance", "len", "hasattr", "getattr"):
            continue
        data = index.files.get(paths[0], b"")
        at = data.find(b"def " + name.encode() + b"(")
        if at == -1:
            continue
        m = _DOC_START.search(data, at, at + 800)
        if m is None or b"\ndef " in data[at + 4 : m.start()] or b":\n" in data[at : m.start()]:
            continue
        end = data.find(m.group(1), m.end())
        if end == -1 or end - m.end() > 4000:
            continue
        text = data[m.end() : end].decode("utf-8", "replace").strip()
        first = " ".join(text.split("\n\n", 1)[0].split())
        if first:
            out[name] = (first, paths[0], data.count(b"\n", 0, at) + 1)
    return out


def guard_calls(sites: Iterable[Site]) -> set[str]:
    """Names of functions called with no arguments in the sites' guard tests."""
    names: set[str] = set()
    seen: set[str] = set()
    for site in sites:
        for guard in site.guards:
            if guard.kind not in ("if", "while", "assert") or guard.test in seen:
                continue
            seen.add(guard.test)
            if "()" not in guard.test:
                continue
            tree = parse_expr(guard.test)
            if tree is None:
                continue
            for node in walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
                    name = call_name(node)
                    if name:
                        names.add(name)
    return names


_CallFacts = tuple[
    dict[str, tuple[Caller, ...]],
    dict[str, int],
    dict[tuple[str, str, int], CallReach],
    frozenset[str],
    dict[str, tuple[str, int]],
    frozenset[str],
]


class _Beside(NamedTuple):
    """What :func:`collect` gathers in the process beside: the facts of the
    calls and the configuration model, which read no exit of a site (so
    not the nested exits this process adds). This process meanwhile reads
    the rest, about as long (the locals' values, the decorators, ...)."""

    calls: _CallFacts
    config: ConfigModel


def _beside(
    index: SourceIndex, targets: set[str], argparse: Mapping[str, tuple[Option, ...]]
) -> _Beside:
    """:class:`_Beside` of the commit held by ``index``: :func:`_call_facts`
    and the configuration model (``argparse``: the options of the files
    read before, :attr:`FileFacts.argparse`)."""
    return _Beside(_call_facts(index, targets), mine_config(index, argparse))


def _call_facts(index: SourceIndex, targets: set[str]) -> _CallFacts:
    """The facts of the calls of the raising functions ``targets``: callers
    (two levels), the crowded names, the calls' reaches
    (:func:`miner.analysis.paths.call_reaches`), the names referenced, and
    where each raising function defined once that no call names is used
    otherwise (:func:`miner.analysis.paths.first_uses`), and the raising
    functions no file mentions but by their ``def``
    (:func:`miner.analysis.callers.unmentioned`)."""
    level1 = find_callers(index, targets)
    second = {t for callers in level1.values() for c in callers if (t := target_name(c.scope))}
    level2 = find_callers(index, second - set(level1))
    callers = {**level2, **level1}
    busy = crowded(index, targets | second)
    reaches = call_reaches(index, callers, targets)
    refs = referenced(index, {target for target, _, _ in reaches})
    uncalled = {t for t in targets if not callers.get(t) and t not in busy}
    uses = first_uses(index, {t for t in uncalled if len(index.definitions(t)) == 1})
    return callers, busy, reaches, refs, uses, unmentioned(index, uncalled)


_Items = tuple[tuple[Any, Any], ...]


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What :func:`collect` reads from one file alone (its bytes and its own
    sites; :func:`file_facts`): the parts of :class:`RepoFacts` keyed by
    that file, as ``(key, value)`` items in the order :func:`collect` puts
    them in, and the words :class:`~miner.analysis.code.SourceIndex`
    searches. Small and picklable, so that the extraction's workers compute
    it beside the sites and the blob cache keeps it
    (:mod:`miner.analysis.filefacts`); :func:`collect` joins the records
    of every file in path order."""

    path: str
    sites_key: str
    """:func:`sites_key` of the sites it was read with: the record is used
    only for the same sites at the same path."""
    words: FileWords
    declared: Declared
    """The names it declares ``bool`` or otherwise (:func:`declared_names`)."""
    argparse: tuple[Option, ...] | None
    """Its :func:`~miner.analysis.config.argparse_options` (None: it holds
    no ``add_argument`` or does not parse)."""
    local_values: _Items = ()
    """Items of :attr:`RepoFacts.local_values` (:func:`local_values`)."""
    decorators: _Items = ()
    """Items of :attr:`RepoFacts.decorators` (:func:`function_decorators`)."""
    doc_lines: _Items = ()
    """Items of :attr:`RepoFacts.doc_lines` (:func:`header_lines`)."""
    nested_exits: _Items = ()
    """Items of :attr:`RepoFacts.nested_exits`
    (:func:`~miner.analysis.nested.site_nested_exits`)."""
    exits: _Items = ()
    """Items of :attr:`RepoFacts.exits` (:func:`exit_branches`, of the sites
    with their nested exits)."""
    loop_ends: _Items = ()
    """Items of :attr:`RepoFacts.loop_ends` (:func:`loop_ends`, likewise)."""
    module_values: _Items = ()
    """Items of :attr:`RepoFacts.module_values` (:func:`module_values`, likewise)."""
    module_doc: _Items = ()
    """The item of :attr:`RepoFacts.module_docs` (:func:`module_docstrings`), if any."""
    module_doc_line: _Items = ()
    """The item of :attr:`RepoFacts.module_doc_lines`, if any."""


def sites_key(sites: Iterable[Site]) -> str:
    """A digest (32 hex digits) of one file's ``sites`` without their ids
    (the extraction's workers see them before ids are given): equal for
    the same sites in the same order."""
    text = repr([replace(s, error_id="", site_id="") for s in sites])
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def file_facts(path: str, data: bytes | None, sites: Sequence[Site]) -> FileFacts:
    """The :class:`FileFacts` of the file ``path`` (its bytes ``data``; None:
    a file with sites that the facts do not read) with its mined ``sites``
    (in line order, as :class:`~miner.model.MineResult` holds them), by the
    same functions as :func:`collect` applied to this file alone; never
    raises for the file's sake (a file that does not parse has the facts
    its lines give)."""
    files = {} if data is None else {path: data}
    index = SourceIndex(files)  # parsed once, by the first part that needs the tree
    argparse = None
    if data is not None and b"add_argument" in data and (tree := index.tree(path)) is not None:
        argparse = tuple(argparse_options(path, tree))
    nested = site_nested_exits(files, sites)
    with_exits = [
        replace(s, exits=(*s.exits, *nested[(s.path, s.line)])) if (s.path, s.line) in nested else s
        for s in sites
    ]
    bare = tested_bare_names(with_exits)
    docs = module_docstrings(files, (s.path for s in sites))
    doc_line = {
        p: files[p][: m.start(2)].count(b"\n") + 1
        for p in docs
        if (m := _MODULE_DOC.match(files[p][:20000])) is not None
    }
    return FileFacts(
        path=path,
        sites_key=sites_key(sites),
        words=file_words(data or b""),
        declared=declared_names(data or b""),
        argparse=argparse,
        local_values=tuple(local_values(files, sites).items()),
        decorators=tuple(function_decorators(files, sites).items()),
        doc_lines=tuple(header_lines(files, sites).items()),
        nested_exits=tuple(nested.items()),
        exits=tuple(exit_branches(files, with_exits).items()),
        loop_ends=tuple(loop_ends(index, with_exits).items()),
        module_values=tuple(module_values(files, bare).items()),
        module_doc=tuple(docs.items()),
        module_doc_line=tuple(doc_line.items()),
    )


class _PerFile(NamedTuple):
    """The parts of :class:`RepoFacts` joined from every file's :class:`FileFacts`."""

    words: dict[str, FileWords]
    declared: dict[str, Declared]
    argparse: dict[str, tuple[Option, ...]]
    local_values: dict[tuple[str, str, str], tuple[LocalValue, ...]]
    decorators: dict[tuple[str, str], tuple[Decorator, ...]]
    doc_lines: dict[tuple[str, int], tuple[int, int]]
    nested_exits: dict[tuple[str, int], tuple[Guard, ...]]
    exits: dict[tuple[str, int], Branch]
    loop_ends: dict[tuple[str, int], int]
    module_values: dict[tuple[str, str], tuple[int, str]]
    module_docs: dict[str, str]
    module_doc_lines: dict[str, int]


def _per_file(
    files: Mapping[str, bytes], sites: Sequence[Site], known: Mapping[str, FileFacts]
) -> _PerFile:
    """Every file's :class:`FileFacts`: the record of its path in ``known``
    (read with these sites: :func:`miner.analysis.filefacts.complete`
    checks), else :func:`file_facts` here; joined in path order."""
    by_path: dict[str, list[Site]] = {}
    for site in sites:
        by_path.setdefault(site.path, []).append(site)
    joined = _PerFile(*({} for _ in _PerFile._fields))
    for path in sorted({*files, *by_path}):
        own = by_path.get(path, [])
        found = known.get(path) if path in files else None
        if found is None or found.path != path:
            found = file_facts(path, files.get(path), own)
        if path in files:
            joined.words[path] = found.words
            joined.declared[path] = found.declared
        if found.argparse is not None:
            joined.argparse[path] = found.argparse
        for part in _PerFile._fields[3:]:
            items = getattr(found, _FIELD_OF.get(part, part))
            getattr(joined, part).update(items)
    return joined


#: The :class:`FileFacts` field of a :class:`_PerFile` part named otherwise.
_FIELD_OF = {"module_docs": "module_doc", "module_doc_lines": "module_doc_line"}


#: How many times :func:`collect` calls its ``progress``, once as each of
#: its parts begins.
COLLECT_PARTS = 4


def collect(
    files: Mapping[str, bytes],
    sites: Iterable[Site],
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    known: Mapping[str, FileFacts] | None = None,
) -> RepoFacts:
    """Gather the facts of a commit from its ``.py`` files (path -> bytes) and
    mined sites. With ``jobs`` > 1, the facts of the calls and the
    configuration model (:class:`_Beside`, which need no exit of a site) are
    gathered in a forked process while this one reads the locals' values,
    adds the nested exits and reads what depends on them, and the code around the
    settings is read in ``jobs`` processes (the same facts). ``progress`` is
    called with the words of each of its :data:`COLLECT_PARTS` parts as it
    begins (for a progress line; nothing is printed here). ``known``: the
    :class:`FileFacts` of files read before with these same sites, by path
    (the extraction's workers', checked by
    :func:`miner.analysis.filefacts.complete`); the other files are read
    here, so the facts are the same with or without.

    The per-file memos (:func:`file_scopes`, :func:`file_imports`) are
    emptied when it returns or raises, so no file's bytes outlive the call."""
    try:
        return _collect(files, sites, jobs, progress or (lambda part: None), known or {})
    finally:
        file_scopes.cache_clear()
        file_imports.cache_clear()


def _collect(
    files: Mapping[str, bytes],
    sites: Iterable[Site],
    jobs: int,
    progress: Callable[[str], None],
    known: Mapping[str, FileFacts],
) -> RepoFacts:
    """:func:`collect` without emptying the per-file memos."""
    sites = list(sites)
    progress("the sites' exits, names and values")
    own = _per_file(files, sites, known)
    index = SourceIndex(files, own.words)
    index.definitions("")  # the word index, built once before both halves read it
    targets = {t for t in (target_name(s.scope) for s in sites if not s.reraise) if t}
    with beside(jobs, _beside, index, targets, own.argparse) as beside_facts:
        # What the cards read: the exits nested in earlier branches added
        # (the records stay as mined).
        sites = _with_nested_exits(sites, own.nested_exits)
        here = _here(files, sites, own, index, targets)
        progress("the callers and the configuration model")
        got = beside_facts()
    # after the process beside has ended: no fork while its pool's thread runs
    callers, busy, reaches, refs, uses, unseen = got.calls
    config = got.config
    around = _around(index, config, sites, here.assigned, jobs, progress)
    progress("the arguments of the calls")
    arguments = call_arguments(files, sites, callers, tested_bare_names(sites))
    return RepoFacts(
        booleans=here.booleans,
        foreign=here.foreign,
        self_calls=here.selfs,
        nested_exits=own.nested_exits,
        local_binds=here.binds,
        local_values=own.local_values,
        call_reach=reaches,
        referenced=refs,
        uses=uses,
        unmentioned=unseen,
        config=config,
        predicates=around.predicates,
        callers=callers,
        crowded=busy,
        exceptions=here.exceptions,
        definitions=here.definitions,
        assigned=here.assigned,
        module_docs=own.module_docs,
        call_docs=around.call_docs,
        exits=own.exits,
        loop_ends=own.loop_ends,
        resolved=around.resolved,
        notes=around.notes,
        choices=around.choices,
        doc_lines=own.doc_lines,
        arguments=arguments,
        decorators=own.decorators,
        module_doc_lines=own.module_doc_lines,
        optional_imports=here.optional,
        module_values=own.module_values,
    )


class _Around(NamedTuple):
    """The facts about the code around the settings (:func:`_around`)."""

    predicates: dict[str, Derived]
    resolved: Mapping[str, tuple[Resolved, ...]]
    notes: Mapping[str, tuple[Note, ...]]
    choices: Mapping[str, tuple[Choice, ...]]
    call_docs: Mapping[str, tuple[str, str, int]]


def _around(
    index: SourceIndex,
    config: ConfigModel,
    sites: list[Site],
    assigned: Mapping[str, tuple[Assigned, ...]],
    jobs: int,
    progress: Callable[[str], None],
) -> _Around:
    """The predicate functions the guards call, how the settings are
    resolved, the notes and choices of the code that involves them, and the
    docstrings of the functions the sites call."""
    predicates = {
        name: found
        for name in sorted(guard_calls(sites))
        if (found := predicate_function(index, name, config)) is not None
    }
    resolved = mine_resolutions(index, config)
    progress("the code around the settings")
    notes, choices, defining = involved_code(index, config, sites, assigned, jobs)
    call_docs = call_docstrings(index, called_names(sites) | defining)
    return _Around(predicates, resolved, notes, choices, call_docs)


def _with_nested_exits(
    sites: list[Site], nested: Mapping[tuple[str, int], tuple[Guard, ...]]
) -> list[Site]:
    """``sites`` with the exits nested in earlier branches added to theirs."""
    return [
        replace(s, exits=(*s.exits, *nested[(s.path, s.line)])) if (s.path, s.line) in nested else s
        for s in sites
    ]


class _Here(NamedTuple):
    """The facts :func:`_collect` gathers in its own process while the
    callers and the configuration model are read beside it."""

    foreign: Mapping[str, frozenset[str]]
    exceptions: Mapping[str, ExceptionInfo]
    definitions: dict[str, int]
    assigned: Mapping[str, tuple[Assigned, ...]]
    optional: Mapping[tuple[str, str], OptionalImport]
    binds: Mapping[tuple[str, str, str], tuple[int, ...]]
    selfs: Mapping[tuple[str, str], tuple[Caller, ...]]
    booleans: frozenset[str]


def _here(
    files: Mapping[str, bytes],
    sites: list[Site],
    own: _PerFile,
    index: SourceIndex,
    targets: set[str],
) -> _Here:
    """The facts of :class:`_Here` (``own``: the joined per-file facts)."""
    definitions = {t: len(index.definitions(t)) for t in sorted(targets)}
    assigned = predicate_assignments(files, tested_names(sites), index)
    return _Here(
        foreign=foreign_names(index, (s.path for s in sites)),
        exceptions=repo_exceptions(index, {s.exception for s in sites if s.exception}),
        definitions=definitions,
        assigned=assigned,
        optional=optional_imports(files, tested_bare_names(sites)),
        binds=local_bindings(files, sites, assigned),
        selfs=same_class_calls(files, sites, definitions),
        booleans=boolean_names(files, tested_names(sites, _IDENTIFIER), own.declared),
    )


def involved_code(
    index: SourceIndex,
    config: ConfigModel,
    sites: Iterable[Site],
    assigned: Mapping[str, tuple[Assigned, ...]],
    jobs: int = 1,
) -> tuple[dict[str, tuple[Note, ...]], dict[str, tuple[Choice, ...]], set[str]]:
    """The settings the sites' guards test, with the comments and conditional
    values of the code that reads or resolves them
    (:func:`miner.analysis.resolvers.setting_code`), and the functions the
    guards' other names are assigned from (whose docstrings say what they mean);
    ``jobs``: processes reading the code around the settings)."""
    options = {o.name for o in config.options}
    settings: set[str] = set()
    keys: set[str] = set()
    defining: set[str] = set()
    for site in sites:
        names = guard_names(g.test for g in (*site.guards, *site.exits))
        settings |= names & options
        others = names - options
        keys |= others
        for name in others:
            for found in assigned.get(name, ()):
                if (call := callee(found.value)) is not None:
                    defining.add(call)
        defining.update(local_calls(site.excerpt.text, others).values())
    notes, choices = setting_code(index, settings, keys | defining, jobs)
    return notes, choices, defining


#: An annotation after its ``:`` (up to ``=``, ``,``, ``)``, a comment or the
#: line's end), and a literal stored after its ``=``. Both start with their
#: punctuation, so that the engine skips to it (a pattern starting with ``^``
#: is tried at every position: four times slower here).
_ANNOTATION = re.compile(rb":[ \t]*([^\n=#,)]+?)[ \t]*(?:=(?!=)|,|\)|#|$)", re.M)
_LITERAL = re.compile(rb"=[ \t]*(True|False|None|[-+]?\d|[\"'\[{])")
#: What comes before the ``:`` of an annotation: the name alone on its line (a
#: field, a parameter on its own line) or after ``(`` / ``,`` (a parameter).
_ANNOTATED_NAME = re.compile(rb"(?:^|[(,])[ \t]*(\w+)[ \t]*$", re.M)
#: What comes before the ``=`` of a stored literal: ``name`` or ``self.name``
#: alone on its line.
_STORED_NAME = re.compile(rb"^[ \t]*(?:self\.)?(\w+)[ \t]*$", re.M)
#: ``Annotated[type, ...]`` (or ``A[...]``, SGLang's alias), over lines: the
#: type is the first argument.
_ANNOTATED_TYPE = re.compile(rb"(?:\w+\.)?(?:A|Annotated)\[\s*([^\n,\]]+?)\s*[,\]]")


#: Any identifier (:func:`boolean_names` reads every name the tests use).
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class Declared(NamedTuple):
    """The names one file declares (:func:`declared_names`)."""

    boolean: frozenset[bytes]
    """Annotated ``bool`` or assigned ``True`` / ``False``."""
    other: frozenset[bytes]
    """Annotated otherwise or assigned another literal."""


def declared_names(data: bytes) -> Declared:
    """The names one file's lines declare as ``bool`` and otherwise, as
    :func:`boolean_names` reads them (by pattern, no parse)."""
    boolean: set[bytes] = set()
    other: set[bytes] = set()
    for m in _ANNOTATION.finditer(data):
        line_start = data.rfind(b"\n", 0, m.start()) + 1
        before = _ANNOTATED_NAME.search(data, line_start, m.start())
        if before is None:
            continue
        kind = m.group(1)
        typed = _ANNOTATED_TYPE.match(data, m.start(1))
        if typed is not None:
            kind = typed.group(1)
        (boolean if kind == b"bool" else other).add(before.group(1))
    for m in _LITERAL.finditer(data):
        line_start = data.rfind(b"\n", 0, m.start()) + 1
        before = _STORED_NAME.match(data, line_start, m.start())
        if before is None:
            continue
        (boolean if m.group(1) in (b"True", b"False") else other).add(before.group(1))
    return Declared(frozenset(boolean), frozenset(other))


def boolean_names(
    files: Mapping[str, bytes],
    names: Iterable[str],
    declared: Mapping[str, Declared] | None = None,
) -> frozenset[str]:
    """Of ``names`` (identifiers), those the commit only ever declares as
    ``bool``: annotated ``bool`` (a field, a parameter; also as the first
    argument of ``Annotated``) or assigned ``True`` or ``False`` somewhere,
    and never annotated otherwise (``Optional[bool]`` included) or assigned
    another literal (``None``, a number, a string, a container). A guard
    testing ``x`` or ``obj.x`` for such a name tests a flag: the cards say
    "is false", not "falsy (``None``, empty or zero)". Read by pattern from
    the lines (no parse: :func:`declared_names`, of each file or from
    ``declared``, by path); a line the patterns misread can only take a
    name out."""
    wanted = {n.encode() for n in names if n.isidentifier()}
    boolean: set[bytes] = set()
    other: set[bytes] = set()
    for path, data in files.items():
        found = (declared or {}).get(path) or declared_names(data)
        boolean |= found.boolean & wanted
        other |= found.other & wanted
    return frozenset(n.decode() for n in boolean - other)
