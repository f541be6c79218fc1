"""The project's hard-input fixtures, and the code that lays them out.

Three sources, one layout (``write_tree``):

* ``fixtures/hard_inputs/*.py`` -- committed text files: message shapes, guard
  paths, scopes, asserts, and text that one parser or the other rejects
  (Python 2, a raw f-string continued by a backslash, a lone backslash line,
  grammar newer than the host Python). Data, never imported, collected or
  linted (``pyproject.toml`` excludes the folder from ruff).
* ``BYTE_CASES`` -- inputs whose bytes are the point (CRLF with a lone CR,
  a UTF-8 BOM, Latin-1 with and without a coding cookie, NUL bytes, tab
  indentation, no line break at the end of the file). Written from bytes
  literals so that no editor, ``.gitattributes`` or formatter can alter them.
* generators -- inputs too large or too deep to keep as files, built by
  functions: thousands of nested parentheses, a 400-branch ``elif`` chain,
  a 200,000-entry table. The symbolic links of ``symlinked/`` are made here too.

Every kind of hard input is a minimal reproduction written for this project.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hard_inputs"

#: Inputs whose exact bytes matter (path -> content).
BYTE_CASES: dict[str, bytes] = {
    # CRLF line breaks, one line ended by a lone CR (line 11) and one by LF.
    "line_endings_mixed.py": (
        b'"""CRLF line breaks, plus one lone CR and one plain LF."""\r\n'
        b"\r\n"
        b"\r\n"
        b"def windows_text(level, user):\r\n"
        b"    if level == 1:\r\n"
        b'        raise ValueError("""top row\r\n'
        b'bottom row""")\r\n'
        b"    if level == 2:\r\n"
        b'        raise ValueError("continued after a \\\r\n'
        b'backslash")\r\n'
        b"    y = 2\r    if level == 3:\n"
        b'        raise RuntimeError(f"after the odd endings: {user}")\r\n'
    ),
    # A UTF-8 byte order mark before the first line.
    "bom_utf8.py": (
        b"\xef\xbb\xbf# Saved by an editor that writes a byte order mark\n"
        b'"""Module whose first three bytes are EF BB BF."""\n'
        b"\n"
        b"\n"
        b"def embed(encoder):\n"
        b"    assert (\n"
        b"        encoder\n"
        b'    ), "an encoder must be configured for embeddings"\n'
        b"    if not callable(encoder):\n"
        b'        raise TypeError("encoder must be callable")\n'
    ),
    # ISO-8859-1 bytes (not valid UTF-8) declared by a PEP 263 cookie.
    "cookie_latin1.py": (
        b"#!/usr/bin/env python\n"
        b"# -*- coding: latin-1 -*-\n"
        b'"""An old module stored as ISO-8859-1."""\n'
        b"\n"
        b"\n"
        b"def translate(word, glossary):\n"
        b"    if word not in glossary:\n"
        b'        raise KeyError("mot inconnu: \xab%s\xbb" % word)\n'
        b"    if glossary[word] is None:\n"
        b'        raise ValueError(f"traduction manquante pour {word} (\xe9t\xe9, 25\xb0C)")\n'
        b"    return glossary[word]\n"
    ),
    # Latin-1 bytes in a comment (line 4) and no cookie: invalid UTF-8.
    "latin1_no_cookie.py": (
        b"#!/usr/bin/env python\n"
        b'"""The credit line below was saved as Latin-1 and there is no coding\n'
        b'cookie, so the file is not valid UTF-8."""\n'
        b"# Author: Fran\xe7oise Ga\xeftan\n"
        b"\n"
        b"\n"
        b"def ensure_positive(total):\n"
        b"    if total <= 0:\n"
        b'        raise ValueError("total must be positive")\n'
    ),
    # Raw NUL bytes in a comment and in string literals; one escaped NUL.
    "nul_in_literal.py": (
        b'"""NUL bytes inside string literals and inside a comment."""\n'
        b"# tag:\x00:tag\n"
        b"\n"
        b"\n"
        b"def split_fields(delimiter):\n"
        b'    if delimiter == "\x00":\n'
        b'        raise ValueError("delimiter \x00 (NUL) is reserved")\n'
        b'    raise ValueError("the escape \\x00 still means NUL")\n'
    ),
    # A stray NUL byte in code (line 7).
    "nul_in_code.py": (
        b'"""A NUL byte in code, as a botched merge of a binary file leaves."""\n'
        b"\n"
        b"\n"
        b"def ahead(v):\n"
        b"    if v:\n"
        b'        raise ValueError("ahead of the NUL")\n'
        b"    return v\x00\n"
        b"\n"
        b"\n"
        b"def behind():\n"
        b'    raise RuntimeError("behind the NUL")\n'
    ),
    # Blocks indented by a tab and a space, then two tabs and a space: valid
    # Python that libcst's tokenizer rejects.
    "fallback_tabs.py": (
        b'"""Indentation mixes tabs and a space consistently; CPython accepts it."""\n'
        b"\n"
        b"\n"
        b"def clamp(v):\n"
        b"\t if v is None:\n"
        b'\t\t raise ValueError("nothing to clamp")\n'
        b"\t return v\n"
    ),
    # Nine lines and no line break after the last one.
    "excerpt_edges.py": (
        b"import os\n"
        b'if not os.environ.get("USER"): raise EnvironmentError("USER is not set")\n'
        b"\n"
        b"\n"
        b"def final(v):\n"
        b'    """Short file whose last raise has no line break after it."""\n'
        b"    if v:\n"
        b"        return v\n"
        b'    raise ValueError("end of the file")'
    ),
}


def deep_parens(depth: int = 3000) -> str:
    """``depth`` nested parentheses in a raise on line 11: CPython refuses
    more than 200; libcst's native parser segfaults beyond about 1,250."""
    nested = "(" * depth + '"nested beyond every limit"' + ")" * depth
    return (
        '"""Generated: thousands of nested parentheses inside a raise.\n'
        'CPython refuses the file; libcst\'s native parser would crash on it."""\n'
        "\n"
        "\n"
        "def fine(v):\n"
        "    if v:\n"
        '        raise ValueError("an ordinary raise ahead of the deep one")\n'
        "\n"
        "\n"
        "def too_deep():\n"
        f"    raise ValueError({nested})\n"
    )


def elif_chain(branches: int = 400) -> str:
    """An ``if``/``elif`` chain of ``branches`` tests, one raise each (line
    ``7 + 2*i``), then an ``else`` raise: deeper than a libcst visitor goes at
    the default recursion limit (about 350 branches)."""
    lines = [
        '"""Generated: a long if/elif chain. libcst parses it; a visitor at the\n',
        'default recursion limit does not get through it."""\n',
        "\n",
        "\n",
        "def handle(cmd):\n",
    ]
    for i in range(branches):
        lines.append(f'    {"if" if i == 0 else "elif"} cmd == "cmd{i}":\n')
        lines.append(f'        raise NotImplementedError("cmd{i} has no handler")\n')
    lines.append("    else:\n")
    lines.append('        raise KeyError(f"no command {cmd!r}")\n')
    return "".join(lines)


def huge_table(entries: int = 200_000) -> str:
    """A flat dict literal of ``entries`` lines and one raise after it (line
    ``entries + 7``): about 5 MB, some 20 s for libcst to parse whole."""
    rows = "".join(f'    "code{i}": {i * 3},\n' for i in range(entries))
    return (
        '"""Generated: a flat table of codes followed by one raise."""\n'
        "CODES = {\n"
        f"{rows}"
        "}\n"
        "\n"
        "def code_for(name):\n"
        "    if name not in CODES:\n"
        '        raise KeyError(f"no code named {name!r}")\n'
        "    return CODES[name]\n"
    )


#: Generated inputs written with the others (the huge table has its own test).
GENERATED: dict[str, Callable[[], str]] = {
    "deep_parens.py": deep_parens,
    "elif_chain.py": elif_chain,
}

#: Symbolic links next to ``symlinked/lib/actual.py`` (link -> target, relative).
SYMLINKS = {
    "symlinked/lib/mirror.py": "actual.py",  # a file link to a file of the repository
    "symlinked/lib/broken.py": "missing_target.py",  # a dangling link
    "symlinked/lib/cycle": "..",  # a directory link forming a cycle
    "symlinked/lib_alias": "lib",  # a directory link to a sibling
}


def text_fixtures() -> dict[str, bytes]:
    """The committed one-file fixtures (the top folder), by name."""
    return {p.name: p.read_bytes() for p in sorted(FIXTURES.glob("*.py"))}


def flat_cases(*, generated: bool = True) -> dict[str, bytes]:
    """Every one-file input by name: committed, byte-level and (unless
    ``generated`` is false) the generated ones."""
    cases = {**text_fixtures(), **BYTE_CASES}
    if generated:
        cases.update({name: make().encode("utf-8") for name, make in GENERATED.items()})
    return dict(sorted(cases.items()))


def write_tree(root: Path) -> None:
    """Lay out every input under ``root``: the one-file inputs at the top, the
    ``symlinked/`` folder with its links."""
    for name, data in flat_cases().items():
        (root / name).write_bytes(data)
    for src in sorted((FIXTURES / "symlinked").rglob("*.py")):
        target = root / src.relative_to(FIXTURES)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(src.read_bytes())
    for link, target in SYMLINKS.items():
        path = root / link
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
