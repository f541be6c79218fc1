"""Why an error is raised, in the code's own words: comments, docstrings and help texts, cited.

:func:`quotes` gathers, for one site, the short quotes a card can cite with
``path:line``, nearest first:

1. the comment on the raise line and the comment block just above it;
2. the comment blocks just above each of its guards and early exits, the
   innermost first (all read from ``Site.excerpt``: no file is read again);
3. the help text of each setting the condition reads (``Option.help``);
4. the docstrings of the functions the condition calls (``is_x_available()``);
5. the enclosing function's and class's docstrings;
6. the docstring of a repository-defined exception class;
7. when none of these is found, the module's docstring.

Every quote is one sentence (cut at a word boundary when long), never a
whole docstring; comments that are code (``# x = f(y)``), linter pragmas and
rulers are left out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from miner.analysis.code import comment_start
from miner.analysis.config import Option
from miner.analysis.exceptions import ExceptionInfo
from miner.model import Guard, Site, shorten

#: Longest quote, in characters.
QUOTE_WIDTH = 180

_PRAGMA = re.compile(
    r"^(?:noqa|type:|pragma|fmt:|pylint:|isort:|mypy:|ruff:|nosec|pyright:|-\*-|!/)", re.I
)
_RULER = re.compile(r"^[\W_]*$")
_WORDS = re.compile(r"[A-Za-z]{2,}")


@dataclass(frozen=True, slots=True)
class Quote:
    """One cited span of the source."""

    kind: str
    """``comment``, ``call-doc``, ``help``, ``function-doc``, ``class-doc``,
    ``exception-doc`` or ``module-doc``."""
    text: str
    """The sentence quoted (no surrounding quotes)."""
    path: str
    line: int
    about: str = ""
    """What the quote is attached to (``the raise``, ``the check at line 12``,
    a flag, a function or class name)."""
    rank: int = 0
    """Lower is nearer to the raise."""

    @property
    def where(self) -> str:
        """```path:line```, or ```path``` when the line is not known."""
        return f"`{self.path}:{self.line}`" if self.line else f"`{self.path}`"


#: A possible end of sentence: ``.``, ``!`` or ``?`` after a word, then a
#: space and a capital, a quote or a parenthesis.
_SENTENCE_END = re.compile(r"(?<=[\w)`'\"\]}][.!?])\s+(?=[A-Z`'\"(-])")
#: Abbreviations whose full stop ends no sentence (``(e.g. Step3p ...)``).
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|eg|ie|etc|vs|cf|approx|incl|resp|viz|Mr|Dr|No|Fig|Eq|Sec)\.)$", re.I
)


def sentence_ends(text: str) -> list[int]:
    """Where the sentences of ``text`` (one line) end: the positions of the
    spaces after a ``.``/``!``/``?`` that ends one, not after an
    abbreviation (``e.g.``, ``i.e.``, ``etc.``) nor inside parentheses."""
    out = []
    for m in _SENTENCE_END.finditer(text):
        before = text[: m.start()]
        if _ABBREVIATION.search(before) or before.count("(") > before.count(")"):
            continue
        out.append(m.start())
    return out


def first_sentence(text: str, width: int = QUOTE_WIDTH) -> str:
    """The first sentence of ``text`` (one line, :func:`sentence_ends`), cut
    at a word boundary."""
    text = " ".join(text.split())
    ends = sentence_ends(text)
    if ends:
        text = text[: ends[0]]
    text = text.replace('"', "'")
    return shorten(text, width)


def lead_sentences(text: str, width: int = QUOTE_WIDTH) -> str:
    """As many whole sentences from the start of ``text`` (one line) as fit
    in ``width`` characters, at least the first (:func:`first_sentence`): a
    short help text keeps its second sentence ("... tensor parallelism for
    FFN. The dp size should be equal to the tp size.")."""
    text = " ".join(text.split())
    fit = [end for end in (*sentence_ends(text), len(text)) if end <= width]
    if not fit:
        return first_sentence(text, width)
    return text[: fit[-1]].replace('"', "'")


def is_code(text: str) -> bool:
    """A comment that is commented-out code rather than prose."""
    if len(_WORDS.findall(text)) >= 4 and not re.search(r"[=(){}\[\]]", text):
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if not tree.body:
        return True
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        value = tree.body[0].value
        # a bare word or two ("# fallback") is prose; a call or an operation is code
        return not isinstance(value, (ast.Name, ast.Constant))
    return True


def _comment_of(line: str) -> tuple[str, bool] | None:
    """(comment text, whole line) of a source line, or None."""
    stripped = line.strip()
    if stripped.startswith("#"):
        return stripped.lstrip("#").strip(), True
    at = comment_start(line, "  #")
    return None if at == -1 else (line[at:].strip().lstrip("#").strip(), False)


def _prose(parts: Iterable[str]) -> str | None:
    kept = [p for p in parts if p and not _PRAGMA.match(p) and not _RULER.match(p)]
    text = " ".join(kept).strip()
    if not text or len(_WORDS.findall(text)) < 3 or is_code(text):
        return None
    return text


def _from_sentence_start(parts: list[str]) -> list[str]:
    """``parts`` (the lines of a comment whose start may be cut off) from its
    first whole sentence: when the first line does not start like a sentence
    (a capital, a digit, a quote or a code mark; not a parenthesis, which
    goes on a sentence begun above), what comes before the
    first sentence end is dropped; nothing is left when there is none."""
    if not parts or re.match(r"[A-Z0-9`'\"]", parts[0]):
        return parts
    text = " ".join(parts)
    ends = sentence_ends(text)
    return [text[ends[0] :].strip()] if ends else []


def comment_above(lines: dict[int, str], line: int) -> tuple[str, int] | None:
    """The comment block ending just above ``line`` (and the trailing comment
    on ``line`` itself when there is no block): (text, first line). The
    block is the nearest paragraph (a bare ``#`` line ends it) at the line's
    own indentation or less: a comment indented deeper than ``line`` closes
    the block above it."""
    parts: list[str] = []
    first = line
    n = line - 1
    own = lines.get(line, "")
    indent = len(own) - len(own.lstrip())
    while n in lines:
        found = _comment_of(lines[n])
        if found is None or not found[1] or (not found[0] and parts):
            break  # a bare ``#`` line ends the paragraph nearest the line
        if own.strip() and len(lines[n]) - len(lines[n].lstrip()) > indent:
            break  # indented deeper: the end of the block above, not about this line
        if found[0]:
            parts.insert(0, found[0])
            first = n
        n -= 1
    if n not in lines and parts:  # the block may start above the excerpt
        parts = _from_sentence_start(parts)
    text = _prose(parts)
    if text is not None:
        return text, first
    found = _comment_of(lines.get(line, ""))
    if found is not None and not found[1]:
        text = _prose([found[0]])
        if text is not None:
            return text, line
    return None


_HEADER = re.compile(r"^\s*(?:async\s+)?(def|class)\s+(\w+)")


def _def_line(lines: dict[int, str], name: str, keyword: str, before: int) -> int | None:
    for n in sorted((n for n in lines if n < before), reverse=True):
        m = _HEADER.match(lines[n])
        if m is not None and m.group(1) == keyword and m.group(2) == name:
            return n
    return None


def quotes(
    site: Site,
    guards: Iterable[Guard] = (),
    options: Iterable[Option] = (),
    exception: ExceptionInfo | None = None,
    calls: Iterable[tuple[str, str, str, int]] = (),
    module_doc: str | None = None,
    header_lines: tuple[int, int, int] = (0, 0, 0),
) -> list[Quote]:
    """The quotes that explain ``site``, nearest first (see the module docstring).

    ``guards`` are the guards and exits whose conditions the card states
    (innermost first); ``options`` the settings its condition reads;
    ``calls`` the functions it calls, as (name, docstring, path, line);
    ``header_lines`` the lines of the enclosing ``def``, ``class`` and module
    docstring when known (0 when not: then the excerpt is searched).
    """
    excerpt = site.excerpt
    lines = {excerpt.start_line + i: t for i, t in enumerate(excerpt.text.split("\n"))}
    found = [
        *_comment_quotes(site, lines, guards),
        *(
            Quote("call-doc", first_sentence(doc), path, line, name, 15)
            for name, doc, path, line in calls
        ),
        *(
            Quote(
                "help",
                lead_sentences(opt.help),
                opt.path,
                opt.line,
                opt.flag or f"{opt.owner}.{opt.name}",
                20,
            )
            for opt in options
            if opt.help and opt.help != "==SUPPRESS=="
        ),
        *_doc_quotes(site, lines, exception, header_lines),
    ]
    seen: set[str] = set()
    out: list[Quote] = []
    for quote in found:
        if quote.text.lower() not in seen:
            seen.add(quote.text.lower())
            out.append(quote)
    if module_doc and not out:
        module = site.path.removesuffix(".py").removeprefix("python/").replace("/", ".")
        out.append(
            Quote("module-doc", first_sentence(module_doc), site.path, header_lines[2], module, 50)
        )
    return sorted(out, key=lambda q: q.rank)


def _comment_quotes(site: Site, lines: dict[int, str], guards: Iterable[Guard]) -> Iterator[Quote]:
    """The comment on or above the raise, then the comment above each
    guard before it (rank: the guard's place, innermost first)."""
    found = comment_above(lines, site.line)
    if found is not None:
        text, line = found
        about = "on the raise" if line == site.line else "above the raise"
        yield Quote("comment", first_sentence(text), site.path, line, about, 0)
    for rank, guard in enumerate(guards, start=1):
        if guard.line >= site.line or guard.kind in ("try", "finally", "unreachable"):
            continue
        found = comment_above(lines, guard.line)
        if found is not None:
            text, line = found
            what = "early exit" if guard.kind.startswith("exit") else "check"
            about = f"above the {what} at line {guard.line}"
            yield Quote("comment", first_sentence(text), site.path, line, about, rank)


def _doc_quotes(
    site: Site,
    lines: dict[int, str],
    exception: ExceptionInfo | None,
    header_lines: tuple[int, int, int],
) -> Iterator[Quote]:
    """The first sentence of the function's, the class's and the exception
    class's docstrings."""
    scope = site.scope.split(".<locals>.")[-1]
    func = scope.rsplit(".", 1)[-1]
    cls = scope.split(".")[0] if "." in scope else None
    if site.function_doc and scope != "<module>":
        line = _def_line(lines, func, "def", site.line) or header_lines[0]
        yield Quote("function-doc", first_sentence(site.function_doc), site.path, line, func, 30)
    if site.class_doc and cls:
        line = _def_line(lines, cls, "class", site.line) or header_lines[1]
        yield Quote("class-doc", first_sentence(site.class_doc), site.path, line, cls, 31)
    if exception is not None and exception.doc:
        doc = first_sentence(exception.doc)
        yield Quote("exception-doc", doc, exception.path, exception.line, exception.name, 40)


#: A sentence of a help text past the first that states what the option needs
#: ("Requires --grpc-port or SGLANG_GRPC_PORT.", "Only used with --return-logprob.").
_REQUIREMENT = re.compile(
    r"(?:Requires\b|Needs\b|Only (?:supported|valid|used|works) (?:with|when)\b"
    r"|Must be (?:used|set) with\b)"
)


def help_requirement(opt: Option) -> str | None:
    """The first sentence of ``opt``'s help after its first one that states
    what the option needs (:data:`_REQUIREMENT`), one line, or None."""
    if not opt.help:
        return None
    sentences = re.split(r"(?<=[.!?;])\s+", " ".join(opt.help.split()))
    for part in sentences[1:]:
        if _REQUIREMENT.match(part):
            return first_sentence(part)
    return None


def help_sentence(opt: Option, value: str) -> str | None:
    """The sentence of ``opt``'s help text that names ``value`` (quoted or as a
    word), or None."""
    if not opt.help:
        return None
    text = " ".join(opt.help.split())
    sentences = re.split(r"(?<=[.!?;])\s+", text)
    pattern = re.compile(rf"(?<![\w-])['\"`]?{re.escape(value)}['\"`]?(?![\w-])")
    for part in sentences:
        if pattern.search(part):
            return first_sentence(part)
    return None
