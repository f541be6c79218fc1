"""The code an origin trace reads: per-file scopes and bindings, parsed once per file.

:class:`Modules` holds the commit's files (path -> bytes) and builds, lazily
and once per file, a :class:`Module`: its functions and classes with their
``__qualname__``, and who binds each name at module level, in each function
and as ``self.x`` in each class. Nothing here decides what a value means;
:mod:`miner.analysis.origins.tracer` does.
"""

from __future__ import annotations

import ast
import bisect
import gc
import re
import warnings
from collections import defaultdict, deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from miner.analysis.code import call_name, child_nodes

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, slots=True)
class Binding:
    """One statement binding a name (or ``self.<name>``) at ``line``.

    ``value`` is the expression whose value the name gets, when there is one
    (``x = value``, ``x: T = value``, ``x += value``, ``for x in value``,
    ``with value as x``, ``(x := value)``); None for an import, a ``def``, a
    ``class``, a parameter and the targets of unpacking with ``*``.
    """

    name: str
    line: int
    kind: str
    """``assign``, ``augmented``, ``unpack``, ``for``, ``with``, ``import``,
    ``def``, ``class``, ``global`` or ``other``."""
    value: ast.expr | None
    statement: ast.AST
    try_node: ast.Try | None = None
    """The innermost ``try`` the binding is in (its body or a handler)."""
    handler: ast.ExceptHandler | None = None
    """The handler of ``try_node`` the binding is in, None when in its body."""


@dataclass(slots=True)
class Function:
    """One ``def`` of a module, with its ``__qualname__`` and class."""

    node: FunctionNode
    qualname: str
    owner: ast.ClassDef | None
    """The class the ``def`` is a method of, None for a function."""
    walrus: bool = True
    """Whether the module may hold a ``:=`` (else no expression binds a name)."""
    _binds: dict[str, list[Binding]] | None = None

    @property
    def params(self) -> list[str]:
        """The parameter names, in order (``self`` included)."""
        a = self.node.args
        names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
        return names

    def bindings(self, name: str) -> list[Binding]:
        """The statements of this function's own body binding ``name``, in order."""
        if self._binds is None:
            self._binds = defaultdict(list)
            for b in scope_bindings(self.node.body, self.walrus):
                self._binds[b.name].append(b)
        return self._binds.get(name, [])


@dataclass(slots=True)
class Module:
    """One parsed file: its functions, classes and module-level bindings."""

    path: str
    tree: ast.Module
    functions: list[Function] = field(default_factory=list)
    classes: dict[str, list[ast.ClassDef]] = field(default_factory=dict)
    globals: dict[str, list[Binding]] = field(default_factory=dict)
    _attrs: dict[int, dict[str, list[tuple[Binding, Function]]]] = field(default_factory=dict)
    _handlers: dict[int, ast.Try] | None = None
    _writes: dict[str, list[tuple[Binding, Function | None]]] | None = None
    _calls: dict[int, list[ast.Call]] = field(default_factory=dict)
    _named: dict[str, list[ast.Call]] | None = None
    _tries: list[ast.Try] | None = None
    _at: dict[tuple[int, str], Function | None] = field(default_factory=dict)

    def function_at(self, line: int, qualname: str = "") -> Function | None:
        """The innermost ``def`` spanning ``line`` (the one named ``qualname``
        first when given)."""
        key = (line, qualname)
        if key not in self._at:
            self._at[key] = self._function_at(line, qualname)
        return self._at[key]

    def _function_at(self, line: int, qualname: str) -> Function | None:
        best: Function | None = None
        for f in self.functions:
            if f.node.lineno <= line <= (f.node.end_lineno or f.node.lineno):
                if qualname and f.qualname == qualname:
                    return f
                if best is None or f.node.lineno >= best.node.lineno:
                    best = f
        return best

    def function_named(self, name: str) -> Function | None:
        """The module-level function ``name`` (defined once), or None."""
        found = [f for f in self.functions if f.qualname == name]
        return found[0] if len(found) == 1 else None

    def self_assignments(self, cls: ast.ClassDef, attr: str) -> list[tuple[Binding, Function]]:
        """Every ``self.attr = value`` in the methods of ``cls``, with the method."""
        table = self._attrs.get(id(cls))
        if table is None:
            table = self._attrs[id(cls)] = defaultdict(list)
            for f in self.functions:
                if f.owner is cls and f.params:
                    for b in attribute_bindings(f.node.body, f.params[0]):
                        table[b.name].append((b, f))
        return table.get(attr, [])

    def attribute_writes(self, attr: str) -> list[tuple[Binding, Function | None]]:
        """Every ``<obj>.attr = value`` of the module, with the function it is
        in (None at module level); the module is walked once for all names."""
        if self._writes is None:
            table: dict[str, list[tuple[Binding, Function | None]]] = defaultdict(list)
            scopes: list[tuple[list[ast.stmt], Function | None]] = [(self.tree.body, None)]
            scopes += [(f.node.body, f) for f in self.functions]
            for body, function in scopes:
                for b in scope_attribute_bindings(body):
                    table[b.name].append((b, function))
            self._writes = dict(table)
        return self._writes.get(attr, [])

    def _index_tries(self) -> None:
        """Walk the module's statements once (in :func:`ast.walk` order,
        no expression entered: none holds a statement) for its ``try``
        statements and handlers."""
        tries: list[ast.Try] = []
        handlers: dict[int, ast.Try] = {}
        for node in walk(self.tree, exprs=False):
            if isinstance(node, ast.Try):
                if node.body:
                    tries.append(node)
                for h in node.handlers:
                    handlers[h.lineno] = node
        self._handlers = handlers
        self._tries = sorted(tries, key=lambda t: t.lineno)

    def calls_at(self, line: int) -> list[ast.Call]:
        """The calls that start on ``line``, in :func:`ast.walk` order (only
        the nodes spanning the line are walked: :func:`nodes_at`)."""
        found = self._calls.get(line)
        if found is None:
            found = [n for n in nodes_at(self.tree, (line,)) if isinstance(n, ast.Call)]
            found = self._calls[line] = [n for n in found if n.lineno == line]
        return found

    def calls_named(self, name: str, lines: Sequence[int] | None = None) -> list[ast.Call]:
        """The calls of ``name`` (:func:`~miner.analysis.code.call_name`), in
        :func:`ast.walk` order: those spanning one of ``lines`` (sorted; only
        the nodes spanning one are walked, :func:`nodes_at`), or of the
        whole module (walked once for every name) when None."""
        if lines is not None:
            found = [n for n in nodes_at(self.tree, lines) if isinstance(n, ast.Call)]
            return [n for n in found if call_name(n) == name]
        if self._named is None:
            named: dict[str, list[ast.Call]] = defaultdict(list)
            for node in walk(self.tree):
                if isinstance(node, ast.Call):
                    called = call_name(node)
                    if called is not None:
                        named[called].append(node)
            self._named = dict(named)
        return self._named.get(name, [])

    def tries(self) -> list[ast.Try]:
        """Every ``try`` statement of the module, in source order."""
        if self._tries is None:
            self._index_tries()
        assert self._tries is not None
        return self._tries

    def try_of_handler(self, line: int) -> ast.Try | None:
        """The ``try`` statement with an ``except`` clause on ``line``, or None."""
        if self._handlers is None:
            self._index_tries()
        assert self._handlers is not None
        return self._handlers.get(line)

    def method(self, cls: ast.ClassDef, name: str) -> Function | None:
        """The method ``name`` of ``cls`` (its own body), or None."""
        for f in self.functions:
            if f.owner is cls and f.node.name == name:
                return f
        return None


def walk(node: ast.AST, exprs: bool = True) -> Iterator[ast.AST]:
    """Every node under ``node`` (itself first), in :func:`ast.walk` order;
    without ``exprs``, the nodes inside an expression are left out."""
    todo = deque([node])
    while todo:
        current = todo.popleft()
        if exprs:
            todo.extend(child_nodes(current))
        else:
            todo.extend(c for c in child_nodes(current) if not isinstance(c, ast.expr))
        yield current


def _first_line(node: ast.AST) -> int:
    """The first line of a node's source, its decorators' included (a
    ``def``'s own line is that of ``def``)."""
    decorators = getattr(node, "decorator_list", None)
    line: int = node.lineno  # type: ignore[attr-defined]
    return min(line, *(d.lineno for d in decorators)) if decorators else line


def nodes_at(tree: ast.AST, lines: Sequence[int]) -> Iterator[ast.AST]:
    """The nodes of ``tree`` whose source spans one of ``lines`` (sorted;
    and those without a position on the way), in :func:`ast.walk` order: a
    subtree whose lines hold none of them is not entered (a node's lines
    hold its children's)."""
    todo = deque([tree])
    while todo:
        current = todo.popleft()
        todo.extend(c for c in child_nodes(current) if _spans(c, lines))
        yield current


def _spans(node: ast.AST, lines: Sequence[int]) -> bool:
    """Whether ``node``'s lines may hold one of ``lines`` (sorted; yes when
    it has no position)."""
    last = getattr(node, "end_lineno", None)
    if last is None:
        return True
    at = bisect.bisect_left(lines, _first_line(node))
    return at < len(lines) and lines[at] <= last


def _parse(data: bytes, path: str) -> ast.Module | None:
    collecting = gc.isenabled()
    gc.disable()  # a tree holds no cycles; collecting while it is built
    try:  # rescans every tree kept so far (most of the stage's time)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(data, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    finally:
        if collecting:
            gc.enable()


#: The fields of a node that hold statements (or the clauses holding them).
_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _block_nodes(node: ast.AST) -> list[ast.AST]:
    """The statements and clauses right under ``node``, in
    :func:`child_nodes` order: a ``def`` or a ``class`` is only ever among
    them (not in an expression, a parameter list or a pattern)."""
    out: list[ast.AST] = []
    for name in node._fields:
        if name in _BLOCKS:
            value = getattr(node, name, None)
            if isinstance(value, list):
                out.extend(
                    v for v in value if isinstance(v, ast.AST) and not isinstance(v, ast.expr)
                )
    return out


def build_module(path: str, tree: ast.Module, walrus: bool = True) -> Module:
    """The :class:`Module` of a parsed file (``walrus``: whether its source
    may hold a ``:=``; False when its bytes have none)."""
    module = Module(path, tree)
    stack: list[tuple[ast.AST, str, ast.ClassDef | None]] = [(tree, "", None)]
    while stack:
        node, prefix, owner = stack.pop()
        for child in _block_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{child.name}"
                module.functions.append(Function(child, qual, owner, walrus))
                stack.append((child, f"{qual}.<locals>.", None))
            elif isinstance(child, ast.ClassDef):
                module.classes.setdefault(child.name, []).append(child)
                stack.append((child, f"{prefix}{child.name}.", child))
            elif not isinstance(child, (ast.Lambda, ast.expr)):
                stack.append((child, prefix, owner))
    module.functions.sort(key=lambda f: f.node.lineno)
    globals_: dict[str, list[Binding]] = defaultdict(list)
    for b in scope_bindings(tree.body, walrus):
        globals_[b.name].append(b)
    module.globals = dict(globals_)
    return module


class Modules:
    """The commit's files, parsed on demand (each at most once)."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = files
        self._modules: dict[str, Module | None] = {}
        self._by_module: dict[str, str] | None = None
        self._attr_index: dict[str, list[str]] | None = None
        self._local: frozenset[str] | None = None
        self._lines: dict[str, list[str]] = {}
        self._exported: frozenset[bytes] | None = None

    def get(self, path: str) -> Module | None:
        """The module at ``path``, or None (not in the commit, or unparsable)."""
        if path not in self._modules:
            data = self.files.get(path)
            tree = None if data is None else _parse(data, path)
            walrus = data is not None and b":=" in data
            self._modules[path] = None if tree is None else build_module(path, tree, walrus)
        return self._modules[path]

    def path_of(self, dotted: str) -> str | None:
        """The file of the repository's module ``dotted`` (``sglang.srt.utils``),
        or None when the module is not the repository's."""
        if self._by_module is None:
            self._by_module = {}
            for path in self.files:
                parts = path[: -len(".py")].split("/")
                if parts[-1] == "__init__":
                    parts.pop()
                for start in range(len(parts)):
                    self._by_module.setdefault(".".join(parts[start:]), path)
        return self._by_module.get(dotted)

    def lines(self, path: str) -> list[str]:
        """The lines of the file ``path`` (decoded once; empty when not in the commit)."""
        if path not in self._lines:
            self._lines[path] = self.files.get(path, b"").decode("utf-8", "replace").split("\n")
        return self._lines[path]

    def local(self, top: str) -> bool:
        """Whether the top-level module ``top`` is the repository's own (a
        folder or a module of that name holds files of the commit)."""
        if self._local is None:
            self._local = frozenset(
                part.removesuffix(".py") for path in self.files for part in path.split("/")
            )
        return top in self._local

    def exported(self, name: str) -> bool:
        """Whether a package's ``__init__.py`` mentions ``name`` as a word
        (an import, ``__all__``, a lazy import's string): its users may use it."""
        if self._exported is None:
            words: set[bytes] = set()
            for path, data in self.files.items():
                if path.rsplit("/", 1)[-1] == "__init__.py":
                    words.update(_WORD.findall(data))
            self._exported = frozenset(words)
        return name.encode() in self._exported

    def attribute_writers(self, attr: str) -> list[str]:
        """The files (sorted) with a statement ``<obj>.attr = ...``."""
        if self._attr_index is None:
            index: dict[str, list[str]] = defaultdict(list)
            for path, data in sorted(self.files.items()):
                for name in set(_ATTR_ASSIGN.findall(data)):
                    index[name.decode("ascii", "replace")].append(path)
            self._attr_index = dict(index)
        return self._attr_index.get(attr, [])


#: A word of code, a comment or a string.
_WORD = re.compile(rb"[A-Za-z_]\w*")
#: ``<obj>.name = `` / ``<obj>.name: T =`` at the start of a statement.
_ATTR_ASSIGN = re.compile(rb"(?m)^[ \t]*[A-Za-z_][\w.]*\.([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")


def _targets(target: ast.expr) -> Iterator[tuple[ast.expr, bool]]:
    """The leaves of an assignment target, and whether they are unpacked."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            inner = elt.value if isinstance(elt, ast.Starred) else elt
            for leaf, _ in _targets(inner):
                yield leaf, True
    else:
        yield target, False


def _statement_values(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr | None, str]]:
    """(target, value, kind) of what one statement or expression binds."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            for leaf, unpacked in _targets(target):
                yield leaf, None if unpacked else node.value, "unpack" if unpacked else "assign"
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        yield node.target, node.value, "assign"
    elif isinstance(node, ast.AugAssign):
        yield node.target, node.value, "augmented"
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        for part, value in _iterated(node.target, node.iter):
            for leaf, _ in _targets(part):
                yield leaf, value, "for"
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                for leaf, _ in _targets(item.optional_vars):
                    yield leaf, item.context_expr, "with"
    elif isinstance(node, ast.NamedExpr):
        yield node.target, node.value, "assign"


def _iterated(target: ast.expr, iterable: ast.expr) -> Iterator[tuple[ast.expr, ast.expr]]:
    """(part of a ``for`` target, the expression its items come from): the
    i-th name of ``for a, b in zip(x, y)`` takes its items from the i-th
    argument, the item of ``for i, v in enumerate(x)`` from ``x``; any
    other target from the whole iterable."""
    name = (
        iterable.func.id
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
        else ""
    )
    parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else []
    args = iterable.args if isinstance(iterable, ast.Call) else []
    plain = not any(isinstance(a, ast.Starred) for a in [*parts, *args])
    if plain and name == "zip" and parts and len(parts) == len(args):
        yield from zip(parts, args, strict=True)
    elif plain and name == "enumerate" and len(parts) == 2 and len(args) == 1:
        yield parts[0], iterable
        yield parts[1], args[0]
    else:
        yield target, iterable


def _walk_scope(
    body: list[ast.stmt], exprs: bool = True
) -> Iterator[tuple[ast.AST, ast.Try | None, ast.ExceptHandler | None]]:
    """Every node of a scope's body, not entering nested ``def``, ``class`` or
    ``lambda`` bodies, with the innermost ``try`` (and handler) around it;
    without ``exprs``, no node inside an expression (no statement is: only
    a ``:=`` binds there)."""
    stack: list[tuple[ast.AST, ast.Try | None, ast.ExceptHandler | None]] = [
        (s, None, None) for s in reversed(body)
    ]
    while stack:
        node, in_try, handler = stack.pop()
        yield node, in_try, handler
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Try):
            for h in node.handlers:
                stack.append((h, node, h))
            stack.extend((s, node, None) for s in reversed(node.body))
            stack.extend((s, in_try, handler) for s in (*node.orelse, *node.finalbody))
            continue
        children = child_nodes(node)
        if not exprs:
            children = [c for c in children if not isinstance(c, ast.expr)]
        stack.extend((c, in_try, handler) for c in reversed(children))


def scope_bindings(body: list[ast.stmt], walrus: bool = True) -> Iterator[Binding]:
    """Every binding of a bare name in a scope's own body (see :class:`Binding`;
    ``walrus``: whether a ``:=`` may be in it)."""
    for node, in_try, handler in _walk_scope(body, walrus):
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(node, ast.ClassDef) else "def"
            yield Binding(node.name, line, kind, None, node, in_try, handler)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                yield Binding(name, line, "import", None, node, in_try, handler)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                yield Binding(name, line, "global", None, node, in_try, handler)
        else:
            for target, value, kind in _statement_values(node):
                if isinstance(target, ast.Name):
                    yield Binding(target.id, line, kind, value, node, in_try, handler)


def attribute_bindings(body: list[ast.stmt], owner: str) -> Iterator[Binding]:
    """Every ``<owner>.name = value`` in a scope's body (``owner``: ``self``)."""
    for node, in_try, handler in _walk_scope(body, exprs=False):
        for target, value, kind in _statement_values(node):
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == owner
            ):
                yield Binding(target.attr, node.lineno, kind, value, node, in_try, handler)  # type: ignore[attr-defined]


def scope_attribute_bindings(body: list[ast.stmt]) -> Iterator[Binding]:
    """Every ``<obj>.name = value`` in a scope's body, on any object (the
    binding's name is the attribute's)."""
    for node, in_try, handler in _walk_scope(body, exprs=False):
        for target, value, kind in _statement_values(node):
            if isinstance(target, ast.Attribute):
                line = node.lineno  # type: ignore[attr-defined]
                yield Binding(target.attr, line, kind, value, node, in_try, handler)


def absolute_module(path: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from`` import in the file ``path`` names (a
    relative import made absolute by the file's folders)."""
    if node.level == 0:
        return node.module or ""
    parts = path[: -len(".py")].split("/")
    base = parts[: len(parts) - node.level]
    return ".".join([*base, *([node.module] if node.module else [])])


def line_text(node: ast.AST) -> str:
    """A node as one line of source (unparsed; at most 160 characters)."""
    try:
        text = ast.unparse(node)
    except (ValueError, RecursionError, AttributeError):
        return ""
    text = " ".join(text.split())
    if isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.If, ast.Try)):
        text = text.split(":", 1)[0]
    return text if len(text) <= 160 else text[:159] + "…"
