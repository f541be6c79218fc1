"""The limits one file is mined within, and the controlled way past Python's own.

* **Size**: files above :data:`MAX_FILE_BYTES` are skipped (the standard
  library's parser alone needs about 110 bytes of memory per source byte).
  A whole-module libcst parse is used only up to :data:`MAX_WHOLE_PARSE_BYTES`;
  above it, a file whose units cannot be used is mined by the ``ast`` fallback
  (libcst needs about 21 s and 1.6 GB for a 4.3 MB generated table).
* **Nesting**: libcst's native parser crashes the process (SIGSEGV, no Python
  exception) on deeply nested input: about 1,250 nested brackets, or some
  thousands of nested unary operators or lambdas. CPython refuses all of these
  (``too many nested parentheses`` above :data:`MAX_BRACKET_DEPTH`, a
  ``RecursionError`` or ``MemoryError`` for the others), so a file that ``ast``
  refuses for nesting is never handed to libcst; one that ``ast`` refuses for
  another reason (newer grammar, NUL bytes) is handed to libcst only when a
  bracket scan finds at most :data:`MAX_BRACKET_DEPTH` levels.
* **Recursion**: libcst's visitors recurse once or more per nesting level, so
  valid deep code (a 400-branch ``elif`` chain, 350 implicitly concatenated
  literals) exhausts the default recursion limit of 1,000.
  :func:`call_with_deep_stack` runs the extraction again in a thread with a
  :data:`DEEP_STACK_BYTES` stack and a recursion limit of
  :data:`DEEP_RECURSION_LIMIT`, restoring the limit afterwards. It is a retry,
  so files that do not need it pay nothing.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

#: Files larger than this are skipped with a reason (bytes).
MAX_FILE_BYTES = 16 * 2**20
#: Largest file parsed whole by libcst (bytes); SGLang's largest is 0.25 MB.
MAX_WHOLE_PARSE_BYTES = 2**20
#: CPython's tokenizer limit on nested brackets (``MAXLEVEL``); libcst crashes
#: near 1,250, so nothing deeper is handed to it.
MAX_BRACKET_DEPTH = 200
#: Recursion limit for the retry: ``ast`` accepts ``elif`` chains up to about
#: 3,000 branches, which libcst's visitors walk with about 9,000 frames.
DEEP_RECURSION_LIMIT = 30_000
#: Stack size of the retry thread (virtual; only the pages used are committed).
#: Python 3.11 keeps Python frames off the C stack: 4 MiB sufficed for 30,000
#: frames in a test, and Python 3.10 needs more.
DEEP_STACK_BYTES = 128 * 2**20

T = TypeVar("T")

_lock = threading.Lock()


class DeepStackUnavailableError(RuntimeError):
    """The retry thread could not be started (for example under a tight
    address-space limit); the message says why."""


def call_with_deep_stack(fn: Callable[[], T]) -> T:
    """Run ``fn()`` in a fresh thread with a large stack and a high recursion limit.

    The process-wide recursion limit is raised for the call and restored
    afterwards (calls are serialised by a lock). Exceptions raised by ``fn``,
    including ``RecursionError``, propagate to the caller.

    Raises:
        DeepStackUnavailableError: the thread could not be started.
    """
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            outcome["error"] = exc

    with _lock:
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size()
        try:
            threading.stack_size(DEEP_STACK_BYTES)
            thread = threading.Thread(target=target, name="miner-deep-stack")
        finally:
            threading.stack_size(old_stack)
        sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
        try:
            try:
                thread.start()
            except (RuntimeError, MemoryError) as exc:
                raise DeepStackUnavailableError(
                    f"cannot start a deep-stack thread: {exc}"
                ) from None
            thread.join()
        finally:
            sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


#: ``ast`` errors that mean "nested too deeply", not "not Python".
_NESTING_MESSAGES = (
    "too many nested parentheses",
    "too many levels of indentation",
    "too complex",
)


def nesting_refusal(exc: BaseException) -> str | None:
    """Why ``ast.parse`` refused a file for nesting, or None for other errors.

    ``RecursionError`` and ``MemoryError`` from the parser mean the same on
    CPython: the source is nested beyond what it compiles.
    """
    if isinstance(exc, RecursionError):
        return "CPython: recursion limit reached while parsing"
    if isinstance(exc, MemoryError):
        return "CPython: parser stack overflow"
    if isinstance(exc, SyntaxError):
        message = str(exc.msg or "")
        if any(text in message for text in _NESTING_MESSAGES):
            return f"CPython: {message}" + (f" (line {exc.lineno})" if exc.lineno else "")
    return None


# Strings (any prefix, single or triple quoted) and comments, skipped by the scan.
_SKIP = re.compile(
    r"""(?:[rRbBuUfFtT]{0,2})(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|"""
    r"""'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*")|\#[^\n]*""",
    re.DOTALL,
)
_BRACKETS = re.compile(r"[()\[\]{}]")


def bracket_depth(text: str) -> int:
    """The deepest nesting of ``()``, ``[]`` and ``{}`` outside strings and comments.

    A regular-expression scan, not a tokenizer, so that it also works on
    grammar the host Python does not know (f-strings nesting quotes, PEP 701).
    The fields inside f-strings are not counted.
    """
    depth = deepest = 0
    pos = 0
    for match in _SKIP.finditer(text):
        for bracket in _BRACKETS.findall(text, pos, match.start()):
            if bracket in "([{":
                depth += 1
                deepest = max(deepest, depth)
            else:
                depth = max(0, depth - 1)
        pos = match.end()
    for bracket in _BRACKETS.findall(text, pos):
        if bracket in "([{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest
