"""Calls of raising helpers across the repository: the ``call`` sites.

A raising helper (:mod:`miner.extract.helpers`) is found from the sites of
its own file, but it is called from anywhere, so its calls are a second pass
over the per-file results of a commit (:func:`link_calls`):

1. every site that could make its function a helper
   (:func:`~miner.extract.helpers.maybe_helper`) is checked against its
   function's definition (the file is parsed with ``ast``);
2. the files that mention a helper's name are found with ``git grep``; a call
   names a helper only when the name is defined once in the whole repository
   (one ``def``), and then

   * ``helper(...)`` names a module function in its own file, or where
     ``from ... import helper`` binds the name;
   * ``obj.helper(...)`` names a method in its own file, or anywhere when
     the name is distinctive (an inner underscore and 8 characters at least,
     so that ``logger.error(...)`` never names a repository's ``error``);
     never a module function (``obj`` may be anything but the module);

3. those files are mined again with their table of helpers
   (:func:`~miner.extract.runner.extract_file`), which adds a ``call`` site for
   each call that binds a helper's parameters; the other sites are kept as
   they were;
4. a ``call`` site may make its own function a helper in turn (a function
   that passes a message built from its parameters on to a helper): steps 1
   to 3 run again, up to :data:`MAX_DEPTH` helpers deep.

Everything is keyed and ordered by path, name and line: the same commit
gives the same records. The files mined again are few (those that call a
helper), so their results are not cached apart; the commit store keeps the
linked results (:mod:`miner.mining.store`).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import logging
import re
from collections.abc import Callable, Sequence

import git

from miner.extract.helpers import CallForm, Helper, functions, helper_of, maybe_helper
from miner.extract.runner import extract_file
from miner.extract.text import DecodeError, decode_source
from miner.model import FileResult, Site

log = logging.getLogger("miner")

#: Helpers calling helpers: how deep the pass follows them.
MAX_DEPTH = 4
#: An attribute call names a helper outside its file only with a name this long...
MIN_ATTRIBUTE_NAME = 8


def distinctive(name: str) -> bool:
    """... that holds an underscore between words (``_report_leak``)."""
    return len(name) >= MIN_ATTRIBUTE_NAME and "_" in name.strip("_")


class _Sources:
    """The files of the commit, read and parsed on demand."""

    def __init__(self, files: Sequence[FileResult], read: Callable[[str], bytes]) -> None:
        self.by_path = {f.path: f for f in files}
        self.read = read
        self._data: dict[str, bytes | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._functions: dict[
            str, dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]
        ] = {}

    def data(self, path: str) -> bytes | None:
        if path not in self._data:
            try:
                self._data[path] = self.read(self.by_path[path].blob)
            except (KeyError, ValueError, OSError, git.GitError):
                self._data[path] = None
        return self._data[path]

    def text(self, path: str) -> str | None:
        data = self.data(path)
        if data is None:
            return None
        try:
            return decode_source(data).text
        except DecodeError:
            return None

    def functions(
        self, path: str
    ) -> dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
        """The file's functions by ``__qualname__`` (:func:`~miner.extract.helpers.functions`)."""
        if path not in self._functions:
            tree = self.tree(path)
            self._functions[path] = functions(tree) if tree is not None else {}
        return self._functions[path]

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            text = self.text(path)
            try:
                self._trees[path] = ast.parse(text) if text is not None else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._trees[path] = None
        return self._trees[path]


def find_helpers(
    sites: Sequence[Site], sources: _Sources, carried: Callable[[Site], int]
) -> list[Helper]:
    """The helpers ``sites`` make of their functions, in (path, line) order."""
    out: list[Helper] = []
    for site in sorted(sites, key=lambda s: (s.path, s.line)):
        if not maybe_helper(site):
            continue
        found = sources.functions(site.path).get(site.scope)
        if found is None:
            continue
        func, method = found
        if not func.lineno <= site.line <= (func.end_lineno or func.lineno):
            continue
        helper = helper_of(site, func, method, carried(site))
        if helper is not None:
            out.append(helper)
    return out


def _mentions(repo: git.Repo, sha: str, names: Sequence[str]) -> list[str]:
    """Paths of the commit's ``.py`` files holding one of ``names`` as a word."""
    patterns = [arg for name in names for arg in ("-e", name)]
    try:
        output = repo.git.grep("-l", "-w", "-F", *patterns, sha, "--", "*.py")
    except git.GitCommandError:  # exit status 1: no match
        return []
    prefix = f"{sha}:"
    return sorted(line[len(prefix) :] for line in output.splitlines() if line.startswith(prefix))


def _defs(text: str, names: Sequence[str]) -> dict[str, int]:
    """How many ``def name`` each of ``names`` has in ``text``."""
    pattern = re.compile(
        r"^[ \t]*(?:async[ \t]+)?def[ \t]+(" + "|".join(map(re.escape, names)) + r")\b",
        re.MULTILINE,
    )
    counts: dict[str, int] = {}
    for match in pattern.finditer(text):
        counts[match[1]] = counts.get(match[1], 0) + 1
    return counts


def _imported(tree: ast.Module | None) -> set[str]:
    """Names bound by ``from ... import name`` (unaliased) anywhere in the file."""
    if tree is None:
        return set()
    return {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname in (None, alias.name)
    }


def _tables(
    helpers: dict[str, list[Helper]], paths: Sequence[str], sources: _Sources
) -> dict[str, dict[str, tuple[Helper, ...]]]:
    """For each path, the helpers its calls may name, with the call forms
    that name them there (see the module doc)."""
    names = sorted(helpers)
    if not names:
        return {}
    words = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    texts = {path: sources.text(path) or "" for path in paths}
    defs: dict[str, int] = {}
    for text in texts.values():
        for name, count in _defs(text, names).items():
            defs[name] = defs.get(name, 0) + count
    tables: dict[str, dict[str, tuple[Helper, ...]]] = {}
    for path in paths:
        text = texts[path]
        # The file's imports, parsed once if a bare call needs them.
        imports = functools.cache(functools.partial(_imports_of, sources, path))

        table: dict[str, tuple[Helper, ...]] = {}
        for name in sorted({m[1] for m in words.finditer(text)}):
            if defs.get(name) != 1:
                continue
            usable = []
            for helper in helpers[name]:
                forms = _forms(helper, path, text, imports)
                if forms:
                    usable.append(dataclasses.replace(helper, forms=forms))
            if usable:
                table[name] = tuple(usable)
        if table:
            tables[path] = table
    return tables


def _forms(
    helper: Helper, path: str, text: str, imports: Callable[[], set[str]]
) -> tuple[CallForm, ...]:
    """The call forms that name ``helper`` in the file ``path`` (see the module doc)."""
    home = helper.path == path
    if helper.method:
        return ("attribute",) if home or distinctive(helper.name) else ()
    if home and helper.qualname == helper.name:
        return ("name",)
    if _bare_call(text, helper.name) and helper.name in imports():
        return ("name",)
    return ()


def _imports_of(sources: _Sources, path: str) -> set[str]:
    return _imported(sources.tree(path))


def _bare_call(text: str, name: str) -> bool:
    """Whether ``name(`` occurs in ``text`` not after a dot or ``def``."""
    pattern = re.compile(r"(?<![\w.])" + re.escape(name) + r"[ \t]*\(")
    for match in pattern.finditer(text):
        if not text[max(0, match.start() - 4) : match.start()].endswith("def "):
            return True
    return False


def link_calls(
    repo: git.Repo,
    sha: str,
    files: Sequence[FileResult],
    *,
    partial: bool = True,
    read: Callable[[str], bytes] | None = None,
) -> list[FileResult]:
    """``files`` (one commit's per-file results) with the ``call`` sites of
    raising helpers added (see the module doc); never raises for a file's sake."""
    files = list(files)
    sources = _Sources(files, read or (lambda blob: repo.odb.stream(bytes.fromhex(blob)).read()))
    known: dict[str, Helper] = {}  # via key -> helper
    by_name: dict[str, list[Helper]] = {}
    calls: dict[str, tuple[Site, ...]] = {}
    tables: dict[str, dict[str, tuple[Helper, ...]]] = {}
    candidates = [s for f in files if f.status == "mined" for s in f.sites if maybe_helper(s)]

    def carried(site: Site) -> int:
        inner = known.get(site.via[0]) if site.kind == "call" and site.via else None
        return len(inner.conditions) if inner is not None else 0

    for _ in range(MAX_DEPTH):
        new = [h for h in find_helpers(candidates, sources, carried) if h.via[0] not in known]
        if not new:
            break
        for helper in new:
            known[helper.via[0]] = helper
            by_name.setdefault(helper.name, []).append(helper)
        paths = [p for p in _mentions(repo, sha, sorted(by_name)) if p in sources.by_path]
        fresh = _tables(by_name, paths, sources)
        changed = sorted(p for p in fresh if fresh[p] != tables.get(p))
        tables = fresh
        candidates = []
        for path in changed:
            found = _call_sites(path, sources, tables[path], partial)
            candidates.extend(s for s in found if s not in calls.get(path, ()))
            calls[path] = found
    out = []
    for result in files:
        added = calls.get(result.path, ()) if result.path in tables else ()
        if added and result.status == "mined":
            sites = sorted((*result.sites, *added), key=lambda s: (s.line, s.kind == "call"))
            result = dataclasses.replace(result, sites=tuple(sites))
        out.append(result)
    if calls:
        log.info("%d call sites of %d raising helpers", sum(map(len, calls.values())), len(known))
    return out


def _call_sites(
    path: str, sources: _Sources, table: dict[str, tuple[Helper, ...]], partial: bool
) -> tuple[Site, ...]:
    data = sources.data(path)
    result = sources.by_path[path]
    if data is None or result.status != "mined":
        return ()
    mined = extract_file(path, result.blob, data, partial=partial, helpers=table)
    return tuple(s for s in mined.sites if s.kind == "call")
