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
   to 3 run again, up to :data:`MAX_DEPTH` helpers deep;
5. last, the ``raise`` sites of exception classes that format their text
   from their arguments (:mod:`miner.extract.formats`; a class defined once
   in the repository) take their message from the class
   (:func:`link_formats`).

Everything is keyed and ordered by path, name and line: the same commit
gives the same records. The files mined again are few (those that call a
helper), so their results are not cached apart; the commit store keeps the
linked results (:mod:`miner.mining.store`).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import git

from miner.extract.formats import exception_format
from miner.extract.helpers import CallForm, Helper, functions, helper_of, maybe_helper
from miner.extract.imports import import_statements
from miner.extract.runner import extract_file
from miner.extract.text import DecodeError, decode_source
from miner.model import FileResult, Site

log = logging.getLogger("miner")

#: Helpers calling helpers: how deep the pass follows them.
MAX_DEPTH = 4
#: Characters of a parameter list read by :func:`_may_be_parameter` (past them: True).
_MAX_PARAMETER_LIST = 4000
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
        if not maybe_helper(site) or not _may_be_parameter(site, sources.text(site.path)):
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


def _message_names(site: Site) -> set[str]:
    """The names in the site's message of which one must be a parameter of
    its function for the site to make a helper (:func:`~miner.extract.helpers.helper_of`)."""
    if site.message_kind == "dynamic":
        return {str(site.message_source)}
    return {p.expr for p in site.message_parts if p.expr is not None and p.expr.isidentifier()}


def _may_be_parameter(site: Site, text: str | None) -> bool:
    """False only when no ``def`` of the site's function name in ``text``
    has one of :func:`_message_names` in its parameter list: the site then
    makes no helper, and the file need not be parsed. A parameter list that
    holds a string or a comment (where a parenthesis may hide) is not read:
    True."""
    if text is None:
        return True
    names = _message_names(site)
    header = re.compile(r"def\s+" + re.escape(site.scope.rsplit(".", 1)[-1]) + r"\b[ \t]*")
    for match in header.finditer(text):
        if text[match.end() : match.end() + 1] != "(":
            return True  # type parameters, a continuation line: not read
        depth, end = 1, match.end() + 1
        while depth and end < len(text) and end - match.end() < _MAX_PARAMETER_LIST:
            char = text[end]
            if char in "'\"#":
                return True
            depth += (char in "([{") - (char in ")]}")
            end += 1
        if depth:
            return True
        words = set(re.findall(r"\w+", text[match.end() : end]))
        if names & words:
            return True
    return False


class HelperStore(Protocol):
    """Where the helpers of a blob's own sites are kept across runs (the
    blob cache's ``helpers`` table: :class:`~miner.mining.cache.BlobCache`)."""

    def get_helpers(self, blobs: Iterable[str]) -> dict[str, tuple[Helper, ...]]:
        """The stored helpers of those of ``blobs`` that have them."""

    def put_helpers(self, rows: Iterable[tuple[str, tuple[Helper, ...]]]) -> None:
        """Keep (blob, helpers) ``rows``."""


def own_helpers(
    files: Sequence[FileResult], sources: _Sources, store: HelperStore | None = None
) -> list[Helper]:
    """The helpers the files' own sites (no ``call`` site yet) make of their
    functions, in (path, line) order: :func:`find_helpers` per file, with the
    helpers of a blob seen before taken from ``store`` (they depend on the
    blob's bytes alone) and the new ones kept there."""
    by_file = {
        f.path: sites
        for f in sorted(files, key=lambda f: f.path)
        if f.status == "mined" and (sites := [s for s in f.sites if maybe_helper(s)])
    }
    blobs = {sources.by_path[path].blob for path in by_file}
    kept = store.get_helpers(blobs) if store is not None else {}
    out: list[Helper] = []
    new: dict[str, tuple[Helper, ...]] = {}
    for path, sites in by_file.items():
        blob = sources.by_path[path].blob
        stored = kept.get(blob)
        if stored is not None and all(len(h.via) == 1 for h in stored):
            out.extend(_repath(h, path) for h in stored)
            continue
        found = find_helpers(sites, sources, lambda site: 0)
        if sources.data(path) is not None:
            new[blob] = tuple(found)
        out.extend(found)
    if store is not None and new:
        store.put_helpers(sorted(new.items()))
    return out


def _repath(helper: Helper, path: str) -> Helper:
    """A helper of a blob's own site as found at ``path`` (the same blob may
    stand at several paths)."""
    if helper.path == path:
        return helper
    return dataclasses.replace(helper, path=path, via=(f"{path}:{helper.line} {helper.qualname}",))


def _mentions(repo: git.Repo, sha: str, names: Sequence[str]) -> list[str]:
    """Paths of the commit's ``.py`` files holding one of ``names`` as a word."""
    patterns = [arg for name in names for arg in ("-e", name)]
    try:
        output = repo.git.grep("-l", "-w", "-F", *patterns, sha, "--", "*.py")
    except git.GitCommandError:  # exit status 1: no match
        return []
    prefix = f"{sha}:"
    return sorted(line[len(prefix) :] for line in output.splitlines() if line.startswith(prefix))


#: A word character, as ``\b`` and ``\w`` see it.
_WORD = re.compile(r"\w")
#: What may stand before ``def`` on its line.
_DEF_INDENT = re.compile(r"[ \t]*(?:async[ \t]+)?")

# The searches below start with the name itself, a literal that ``re`` finds
# fast; a pattern starting with ``\b``, ``^`` or a lookbehind tries every
# position instead (twenty times slower), so what stands before the match is
# checked by hand.


def _after_word(text: str, start: int) -> bool:
    """Whether a word character stands just before ``start``."""
    return start > 0 and _WORD.match(text, start - 1) is not None


def _has_word(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as a word (``\bname\b``)."""
    pattern = re.compile(re.escape(name) + r"\b")
    return any(not _after_word(text, m.start()) for m in pattern.finditer(text))


def _defs(text: str, names: Sequence[str]) -> dict[str, int]:
    """How many ``def name`` (a line ``[async] def name``) each of ``names`` has in ``text``."""
    counts: dict[str, int] = {}
    for name in names:
        for match in re.finditer(r"def[ \t]+" + re.escape(name) + r"\b", text):
            line = text.rfind("\n", 0, match.start()) + 1
            if _DEF_INDENT.fullmatch(text, line, match.start()) is not None:
                counts[name] = counts.get(name, 0) + 1
    return counts


def _imported(data: bytes | None) -> set[str]:
    """Names bound by ``from ... import name`` (unaliased) anywhere in the
    file (read by :func:`~miner.extract.imports.import_statements`)."""
    if data is None:
        return set()
    return {
        name
        for module, pairs in import_statements(data)
        if module is not None
        for name, bound in pairs
        if bound == name and name != "*"
    }


def _tables(
    helpers: dict[str, list[Helper]], paths: Sequence[str], sources: _Sources
) -> dict[str, dict[str, tuple[Helper, ...]]]:
    """For each path, the helpers its calls may name, with the call forms
    that name them there (see the module doc)."""
    names = sorted(helpers)
    if not names:
        return {}
    texts = {path: sources.text(path) or "" for path in paths}
    # The names in each file as a substring first (fast), then as a word.
    present = {path: [n for n in names if n in text] for path, text in texts.items()}
    defs: dict[str, int] = {}
    for path, text in texts.items():
        for name, count in _defs(text, present[path]).items():
            defs[name] = defs.get(name, 0) + count
    tables: dict[str, dict[str, tuple[Helper, ...]]] = {}
    for path in paths:
        text = texts[path]
        if not present[path]:
            continue
        # The file's imports, read once if a bare call needs them.
        imports = functools.cache(functools.partial(_imports_of, sources, path))

        table: dict[str, tuple[Helper, ...]] = {}
        for name in (n for n in present[path] if _has_word(text, n)):
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
    return _imported(sources.data(path))


def _bare_call(text: str, name: str) -> bool:
    """Whether ``name(`` occurs in ``text`` not after a dot or ``def``."""
    pattern = re.compile(re.escape(name) + r"[ \t]*\(")
    for match in pattern.finditer(text):
        start = match.start()
        if _after_word(text, start) or text[start - 1 : start] == ".":
            continue
        if not text[max(0, start - 4) : start].endswith("def "):
            return True
    return False


def link_calls(
    repo: git.Repo,
    sha: str,
    files: Sequence[FileResult],
    *,
    partial: bool = True,
    read: Callable[[str], bytes] | None = None,
    store: HelperStore | None = None,
) -> list[FileResult]:
    """``files`` (one commit's per-file results) with the ``call`` sites of
    raising helpers added (see the module doc); never raises for a file's sake.
    ``store`` keeps the helpers of each blob's own sites across runs
    (:func:`own_helpers`)."""
    files = list(files)
    sources = _Sources(files, read or (lambda blob: repo.odb.stream(bytes.fromhex(blob)).read()))
    known: dict[str, Helper] = {}  # via key -> helper
    by_name: dict[str, list[Helper]] = {}
    calls: dict[str, tuple[Site, ...]] = {}
    tables: dict[str, dict[str, tuple[Helper, ...]]] = {}
    candidates: list[Site] = []  # the call sites that may make helpers in turn

    def carried(site: Site) -> int:
        inner = known.get(site.via[0]) if site.kind == "call" and site.via else None
        return len(inner.conditions) if inner is not None else 0

    for depth in range(MAX_DEPTH):
        helpers = (
            own_helpers(files, sources, store)
            if depth == 0
            else find_helpers(candidates, sources, carried)
        )
        new = [h for h in helpers if h.via[0] not in known]
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
    return link_formats(repo, sha, out, sources, partial)


#: Exception names no repository class can stand for.
_BUILTIN = frozenset(name for name in dir(builtins) if name[:1].isupper())
#: What raises a class of the formats name: ``Name`` or ``a.b.Name``.
_DOTTED = re.compile(r"(?:\w+\.)*(\w+)")


def _raised_names(files: Sequence[FileResult]) -> dict[str, set[str]]:
    """Exception class names (last component) raised by a call, not builtin,
    with the paths that raise them."""
    out: dict[str, set[str]] = {}
    for result in files:
        for site in result.sites:
            match = _DOTTED.fullmatch(site.exception or "") if site.kind == "raise" else None
            if match is None or site.reraise or site.message_kind == "none":
                continue
            name = match.group(1)
            if name[:1].isupper() and name not in _BUILTIN:
                out.setdefault(name, set()).add(result.path)
    return out


def _class_defs(repo: git.Repo, sha: str, names: Sequence[str]) -> dict[str, list[tuple[str, int]]]:
    """For each of ``names``, the ``(path, line)`` of every ``class name`` of the commit."""
    if not names:
        return {}
    pattern = r"^[[:space:]]*class[[:space:]]+(" + "|".join(names) + r")[[:space:]]*[(:]"
    try:
        output = repo.git.grep("-n", "-E", pattern, sha, "--", "*.py")
    except git.GitCommandError:  # exit status 1: no match
        return {}
    found: dict[str, list[tuple[str, int]]] = {}
    prefix = f"{sha}:"
    for row in output.splitlines():
        if not row.startswith(prefix):
            continue
        path, line, text = row[len(prefix) :].split(":", 2)
        match = re.match(r"\s*class\s+(\w+)", text)
        if match is not None:
            found.setdefault(match.group(1), []).append((path, int(line)))
    return found


def _formats(
    repo: git.Repo, sha: str, raised: dict[str, set[str]], sources: _Sources
) -> dict[str, Helper]:
    """The exception classes raised in the commit that format their text
    (:func:`~miner.extract.formats.exception_format`), by name: only a name
    defined once in the repository."""
    out: dict[str, Helper] = {}
    for name, defs in sorted(_class_defs(repo, sha, sorted(raised)).items()):
        if len(defs) != 1 or defs[0][0] not in sources.by_path:
            continue
        path, line = defs[0]
        tree, text = sources.tree(path), sources.text(path)
        if tree is None or text is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == name and node.lineno == line:
                found = exception_format(node, path, text.split("\n"))
                if found is not None:
                    out[name] = found
    return out


def link_formats(
    repo: git.Repo, sha: str, files: Sequence[FileResult], sources: _Sources, partial: bool
) -> list[FileResult]:
    """``files`` with the message of each ``raise`` of a call of an exception
    class that formats its text from its arguments taken from the class (see
    :mod:`miner.extract.formats`): the files that raise one are mined again
    with the formats the file names (``Name(...)`` in the defining file or
    where ``from ... import Name`` binds it, ``mod.Name(...)`` anywhere), and
    their ``raise`` sites replaced by line."""
    raised = _raised_names(files)
    formats = _formats(repo, sha, raised, sources)
    by_path: dict[str, dict[str, tuple[Helper, ...]]] = {}
    for name, helper in formats.items():
        for path in sorted(raised[name]):
            forms: tuple[CallForm, ...] = ("attribute",)
            if path == helper.path or name in _imported(sources.data(path)):
                forms = ("name", "attribute")
            by_path.setdefault(path, {})[name] = (dataclasses.replace(helper, forms=forms),)
    out = []
    changed = 0
    for result in files:
        table = by_path.get(result.path)
        data = sources.data(result.path) if table else None
        if table and data is not None and result.status == "mined":
            mined = extract_file(result.path, result.blob, data, partial=partial, helpers=table)
            again = {s.line: s for s in mined.sites if s.kind == "raise"}
            sites = tuple(
                again.get(s.line, s) if s.kind == "raise" and s != again.get(s.line, s) else s
                for s in result.sites
            )
            changed += sum(1 for a, b in zip(sites, result.sites, strict=True) if a is not b)
            result = dataclasses.replace(result, sites=sites)
        out.append(result)
    if changed:
        log.info("%d raises of %d exception classes that format their text", changed, len(formats))
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
