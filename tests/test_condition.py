"""Exits, ``body_only`` / ``abstract`` and the condition a site is reached under.

Each source is mined three ways (libcst units, libcst whole module, the
``ast`` fallback) and the records must agree; then the site marked ``# <-``
is checked: its exits (as :meth:`~miner.model.Guard.describe` strings) and
the text of :func:`~miner.analysis.condition.condition_of`.
"""

from __future__ import annotations

import ast
import json
import textwrap
from dataclasses import replace

import pytest

from miner.analysis.condition import (
    Condition,
    atom_names,
    atom_value,
    condition_from,
    condition_of,
    implied,
    possible,
)
from miner.extract.ast_fallback import collect_ast
from miner.extract.runner import extract_file
from miner.extract.text import decode_source
from miner.model import Guard, Site

MARK = "# <-"


def mine_all(source: str, path: str = "pkg/mod.py") -> list[Site]:
    """The sites of ``source``; the three ways of mining must agree."""
    data = textwrap.dedent(source).lstrip("\n").encode()
    partial = extract_file(path, "0" * 40, data)
    full = extract_file(path, "0" * 40, data, partial=False)
    assert partial.status == "mined", partial.reason
    assert partial.sites == full.sites
    text = decode_source(data)
    fallback = collect_ast(ast.parse(text.text), path=path, lines=text.lines)
    assert [replace(s, parser="libcst") for s in fallback] == sorted(
        partial.sites, key=lambda s: s.line
    )
    return list(partial.sites)


def marked(source: str) -> Site:
    """The site on the line marked ``# <-``."""
    lines = textwrap.dedent(source).lstrip("\n").split("\n")
    (line,) = [i + 1 for i, text in enumerate(lines) if text.rstrip().endswith(MARK)]
    (site,) = [s for s in mine_all(source) if s.line == line]
    return site


def exits(site: Site) -> list[str]:
    return [g.describe() for g in site.exits]


# (source, exits as describe() strings, condition text)
CASES: dict[str, tuple[str, list[str], str]] = {
    "teacache: an early return before the site": (
        """
        def f(enable_teacache):
            if not enable_teacache:
                return False
            raise ValueError("x")  # <-
        """,
        ["not (not enable_teacache)"],
        "enable_teacache",
    ),
    "an exit inside the enclosing if": (
        """
        def f(a, b):
            if a:
                if b is None:
                    return
                raise ValueError("x")  # <-
        """,
        ["not (b is None)"],
        "a and b is not None",
    ),
    "an exit in the outer block before the site's if": (
        """
        def f(a, b):
            if not a:
                raise KeyError("no a")
            if b:
                raise ValueError("x")  # <-
        """,
        ["not (not a)"],
        "a and b",
    ),
    "exits in several blocks, outermost first": (
        """
        def f(a, b, c):
            if a is None:
                return
            if b:
                x = 1
                if c > 3:
                    return
                raise ValueError("x")  # <-
        """,
        ["not (a is None)", "not (c > 3)"],
        "a is not None and b and c <= 3",
    ),
    "continue in a for loop": (
        """
        def f(xs):
            for x in xs:
                if x.skip:
                    continue
                raise ValueError(x)  # <-
        """,
        ["not (x.skip)"],
        "x in xs and not x.skip",
    ),
    "break in a while loop": (
        """
        def f(xs):
            while xs:
                if xs[0] == 0:
                    break
                raise ValueError("x")  # <-
        """,
        ["not (xs[0] == 0)"],
        "xs and xs[0] != 0",
    ),
    "for with a tuple target": (
        """
        def f(pairs):
            for i, x in enumerate(pairs):
                if not x:
                    continue
                raise ValueError(i)  # <-
        """,
        ["not (not x)"],
        "(i, x) in enumerate(pairs) and x",
    ),
    "an elif chain of exits": (
        """
        def f(mode):
            if mode == "a":
                return 1
            elif mode == "b":
                return 2
            raise ValueError(mode)  # <-
        """,
        ['not (mode == "a")', 'not (mode == "b")'],
        'mode != "a" and mode != "b"',
    ),
    "an elif chain whose middle branch alone falls through": (
        """
        def f(a, b):
            if a:
                return
            elif b:
                pass
            else:
                raise KeyError("neither")
            raise ValueError("x")  # <-
        """,
        ["not (a)", "b"],
        "not a and b",
    ),
    "an elif chain whose first branch falls through": (
        """
        def f(a, b):
            if a:
                pass
            elif b:
                return
            raise ValueError("x")  # <-
        """,
        [],
        "True",
    ),
    "an or-test: both operands false": (
        """
        def f(a, b):
            if a or b:
                return
            raise ValueError("x")  # <-
        """,
        ["not (a or b)"],
        "not a and not b",
    ),
    "De Morgan: not (a and b) exits": (
        """
        def f(a, b):
            if not (a and b):
                return
            raise ValueError("x")  # <-
        """,
        ["not (not (a and b))"],
        "a and b",
    ),
    "De Morgan: an and-test exits": (
        """
        def f(a, b):
            if a and b.ready:
                return
            raise ValueError("x")  # <-
        """,
        ["not (a and b.ready)"],
        "not a or not b.ready",
    ),
    "comparisons negated": (
        """
        def f(x, n, k, d, a, b):
            if x is not None:
                return
            if n < 0:
                raise ValueError("negative")
            if k in d:
                return
            if not (a == b):
                return
            raise ValueError("x")  # <-
        """,
        ["not (x is not None)", "not (n < 0)", "not (k in d)", "not (not (a == b))"],
        "x is None and n >= 0 and k not in d and a == b",
    ),
    "not (not x) exits": (
        """
        def f(x):
            if not (not x):
                return
            raise ValueError("x")  # <-
        """,
        ["not (not (not x))"],
        "not x",
    ),
    "not (not x) as the guard": (
        """
        def f(x):
            if not (not x):
                raise ValueError("x")  # <-
        """,
        [],
        "x",
    ),
    "if/else: only the if branch falls through": (
        """
        def f(a):
            if a:
                b = 1
            else:
                return
            raise ValueError("x")  # <-
        """,
        ["a"],
        "a",
    ),
    "if/else: only the else branch falls through": (
        """
        def f(a, c):
            if a:
                raise KeyError("a")
            else:
                if c:
                    return
            raise ValueError("x")  # <-
        """,
        ["not (a)", "not (c)"],
        "not a and not c",
    ),
    "a raise is an exit too": (
        """
        def f(bad):
            if bad:
                raise KeyError("bad")
            raise ValueError("x")  # <-
        """,
        ["not (bad)"],
        "not bad",
    ),
    "an assert before the site": (
        """
        def f(x):
            assert x is not None, "x unset"
            raise ValueError(x.name)  # <-
        """,
        ["x is not None"],
        "x is not None",
    ),
    "an assert site after an exit": (
        """
        def f(a, b):
            if not a:
                return
            assert b, "b unset"  # <-
        """,
        ["not (not a)"],
        "a and not b",
    ),
    "the same atom twice, spelled two ways: the assert never fails": (
        """
        def f(x):
            if x is None:
                return
            assert x is not None  # <-
        """,
        ["not (x is None)"],
        "False",
    ),
    "a try whose handler exits": (
        """
        def f(d, k):
            try:
                v = d[k]
            except KeyError:
                return None
            raise ValueError(v)  # <-
        """,
        ["try body raised no KeyError"],
        "try body raised no KeyError (except at line 4)",
    ),
    "a try whose handlers all exit: the body's exits hold": (
        """
        def f(d, k):
            try:
                if k is None:
                    return
                v = d[k]
            except (KeyError, IndexError):
                raise
            raise ValueError(v)  # <-
        """,
        ["not (k is None)", "try body raised no (KeyError, IndexError)"],
        "k is not None and try body raised none of (KeyError, IndexError) (except at line 6)",
    ),
    "two tries: the handler of each is its own atom": (
        """
        def f(load, parse):
            try:
                data = load()
            except Exception:
                return None
            try:
                return parse(data)
            except Exception as exc:
                raise ValueError(data) from exc  # <-
        """,
        ["try body raised no Exception"],
        "try body raised no Exception (except at line 4)"
        " and try body raised Exception (except at line 8)",
    ),
    "except as a guard": (
        """
        def f(d, k):
            try:
                return d[k]
            except (KeyError, IndexError) as exc:
                raise ValueError(k) from exc  # <-
        """,
        [],
        "try body raised one of (KeyError, IndexError) (except at line 4)",
    ),
    "a while loop without break ended": (
        """
        def f(q):
            while q.busy():
                q.wait()
            raise TimeoutError("x")  # <-
        """,
        ["not (q.busy())"],
        "not q.busy()",
    ),
    "a match whose first case exits": (
        """
        def f(s, kw):
            match s:
                case "a" | "b" if kw:
                    return 1
                case {"k": v}:
                    pass
            raise ValueError(s)  # <-
        """,
        ['not (match s: case "a" | "b" if kw)'],
        's does not match "a" | "b" or not kw',
    ),
    "a case as a guard": (
        """
        def f(s):
            match s:
                case {"k": v} if v > 1:
                    raise ValueError(s)  # <-
        """,
        [],
        's matches {"k": v} and v > 1',
    ),
    "dead code after an unconditional return": (
        """
        def f(x):
            return x
            raise ValueError("x")  # <-
        """,
        ["unreachable (line 2 always leaves)"],
        "False",
    ),
    "module level: an import-time check": (
        """
        import sys
        if sys.version_info < (3, 8):
            raise ImportError("old")
        if not sys.platform:
            raise ValueError("x")  # <-
        """,
        ["not (sys.version_info < (3, 8))"],
        "sys.version_info >= (3, 8) and not sys.platform",
    ),
    # What a later statement changes no longer holds:
    "a repeated assert on a rebound name": (
        """
        def f(post):
            resp = post()
            assert resp.status_code == 200
            resp = post()
            assert resp.status_code == 200  # <-
        """,
        [],
        "resp.status_code != 200",
    ),
    "an attribute assigned after the exit": (
        """
        def f(self, y):
            if self.x is None:
                return
            if y is None:
                return
            self.x = None
            self.count += 1
            raise ValueError(y)  # <-
        """,
        ["not (y is None)"],
        "y is not None",
    ),
    "the loop target rebinds the tested name": (
        """
        def f(x, xs):
            if x is None:
                return
            for x in xs:
                raise ValueError(x)  # <-
        """,
        [],
        "x in xs",
    ),
    "a later statement of the loop body, in an earlier round": (
        """
        def f(x, xs):
            if x is None:
                return
            for y in xs:
                if y:
                    raise ValueError(x)  # <-
                x = None
        """,
        [],
        "y in xs and y",
    ),
    "the branch that falls through rebinds its test": (
        """
        def f(a, b):
            if a:
                a = None
            else:
                return
            raise ValueError(b)  # <-
        """,
        [],
        "True",
    ),
    "a comprehension's variable is its own": (
        """
        def f(uses):
            assert [use.name for use in uses] == ["a", "b"]
            assert [use.stage for use in uses] == ["x", "x"]
            assert uses[0].ready  # <-
        """,
        ['[use.name for use in uses] == ["a", "b"]', '[use.stage for use in uses] == ["x", "x"]'],
        '[use.name for use in uses] == ["a", "b"] and [use.stage for use in uses] == ["x", "x"]'
        " and not uses[0].ready",
    ),
    "a store of another name changes nothing": (
        """
        def f(x, items):
            if x is None:
                return
            items[0] = 1
            y = x.value
            raise ValueError(y)  # <-
        """,
        ["not (x is None)"],
        "x is not None",
    ),
    # Nothing must be recorded:
    "an if without an exit": (
        """
        def f(x, log):
            if x:
                log(x)
            raise ValueError("x")  # <-
        """,
        [],
        "True",
    ),
    "an exit in a nested def": (
        """
        def f(x):
            def g():
                if x:
                    return
            raise ValueError("x")  # <-
        """,
        [],
        "True",
    ),
    "an exit after the site": (
        """
        def f(x):
            if x.ready:
                raise ValueError("x")  # <-
            if x.done:
                return
        """,
        [],
        "x.ready",
    ),
    "an exit in the enclosing function of a nested def": (
        """
        def f(x):
            if not x:
                return
            def g(y):
                raise ValueError(y)  # <-
            return g
        """,
        [],
        "True",
    ),
    "a break of an inner loop is no exit": (
        """
        def f(rows):
            for row in rows:
                if row:
                    break
            raise ValueError("x")  # <-
        """,
        [],
        "True",
    ),
    "an exit inside a with (the manager may swallow it)": (
        """
        def f(x, lock):
            with lock:
                if x:
                    raise KeyError("x")
            raise ValueError("x")  # <-
        """,
        [],
        "True",
    ),
    "an exit in a try body whose handler falls through": (
        """
        def f(x):
            try:
                if x:
                    return
            except OSError:
                pass
            raise ValueError("x")  # <-
        """,
        [],
        "True",
    ),
    "a while loop with a break": (
        """
        def f(q):
            while q.busy():
                if q.failed:
                    break
            raise TimeoutError("x")  # <-
        """,
        [],
        "True",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_exits_and_condition(name: str) -> None:
    source, want_exits, want_text = CASES[name]
    site = marked(source)
    assert exits(site) == want_exits
    assert condition_of(site).text() == want_text


def test_exit_lines_kinds_and_json() -> None:
    site = marked(CASES["an elif chain of exits"][0])
    assert [(g.kind, g.test, g.negated, g.line) for g in site.exits] == [
        ("exit", 'mode == "a"', True, 2),
        ("exit", 'mode == "b"', True, 4),
    ]
    data = site.to_json()
    keys = list(data)
    assert keys[keys.index("guards") + 1 : keys.index("guards") + 4] == [
        "exits",
        "body_only",
        "abstract",
    ]
    assert data["exits"][0] == {"kind": "exit", "test": 'mode == "a"', "negated": True, "line": 2}
    assert Site.from_json(json.loads(json.dumps(data))) == site
    # Records written before exits existed still load.
    for key in ("exits", "body_only", "abstract"):
        del data[key]
    assert Site.from_json(data) == replace(site, exits=())


FACTS = """
import abc
from abc import ABC, ABCMeta, abstractmethod
import typing


class Base(ABC):
    def method(self):
        '''Docstring.'''
        raise NotImplementedError

    def checked(self, x):
        if x:
            raise ValueError(x)


class Meta(metaclass=ABCMeta):
    def method(self): raise NotImplementedError


class Proto(typing.Protocol[int]):
    def method(self):
        ...
        raise NotImplementedError("proto")


class Plain:
    @abc.abstractmethod
    def method(self):
        pass
        raise NotImplementedError(self)

    @abstractmethod
    def two(self):
        x = 1
        raise NotImplementedError

    @property
    def prop(self):
        raise NotImplementedError

    def outer(self):
        def inner():
            raise NotImplementedError
        return inner


def free():
    '''Doc.'''
    assert False, "not implemented"
"""


def test_body_only_and_abstract() -> None:
    got = [(s.scope, s.body_only, s.abstract) for s in mine_all(FACTS)]
    assert got == [
        ("Base.method", True, True),
        ("Base.checked", False, True),
        ("Meta.method", True, True),
        ("Proto.method", True, True),
        ("Plain.method", True, True),
        ("Plain.two", False, True),
        ("Plain.prop", True, False),
        ("Plain.outer.<locals>.inner", True, False),
        ("free", True, False),
    ]


# -- real code, SGLang v0.5.19 ----------------------------------------------------
SGLANG: dict[str, tuple[str, list[str], str]] = {
    # python/sglang/multimodal_gen/runtime/models/dits/hunyuanvideo.py
    "hunyuanvideo should_skip_forward_for_cached_states": (
        """
        class HunyuanVideoTransformer3DModel:
            def should_skip_forward_for_cached_states(self, **kwargs) -> bool:
                forward_context = get_forward_context()
                forward_batch = forward_context.forward_batch
                if forward_batch is None:
                    return False
                current_timestep = forward_context.current_timestep
                enable_teacache = forward_batch.enable_teacache

                if not enable_teacache:
                    return False
                raise NotImplementedError("teacache is not supported yet for HunyuanVideo")  # <-

                teacache_params = forward_batch.teacache_params
                assert teacache_params is not None, "teacache_params is not initialized"
        """,
        ["not (forward_batch is None)", "not (not enable_teacache)"],
        "forward_batch is not None and enable_teacache",
    ),
    # python/sglang/srt/debug_utils/comparator/aligner/reorderer/planner.py
    "reorderer planner: continue, then an earlier raise": (
        """
        def compute_reorderer_plans(
            dim_specs: list[DimSpec],
            parallel_infos: list[dict[ParallelAxis, AxisInfo]],
            *,
            thd_global_seq_lens: Optional[list[int]] = None,
        ) -> list[ReordererPlan]:
            plans: list[ReordererPlan] = []

            for spec in dim_specs:
                for modifier in spec.parallel_modifiers:
                    if modifier.ordering is None or modifier.ordering == Ordering.NATURAL:
                        continue

                    if spec.name not in _ALLOWED_ZIGZAG_DIM_NAMES:
                        raise ValueError(
                            f"Zigzag ordering is only supported on sequence dims "
                            f"(dim name must be one of "
                            f"{sorted(_ALLOWED_ZIGZAG_DIM_NAMES)}), "
                            f"but got dim name {spec.name!r} in {spec}"
                        )

                    if modifier.ordering != Ordering.ZIGZAG:
                        raise ValueError(  # <-
                            f"Unsupported ordering {modifier.ordering!r} for dim {spec.name!r}"
                        )
        """,
        [
            "not (modifier.ordering is None or modifier.ordering == Ordering.NATURAL)",
            "not (spec.name not in _ALLOWED_ZIGZAG_DIM_NAMES)",
        ],
        "spec in dim_specs and modifier in spec.parallel_modifiers"
        " and modifier.ordering is not None and modifier.ordering != Ordering.NATURAL"
        " and spec.name in _ALLOWED_ZIGZAG_DIM_NAMES and modifier.ordering != Ordering.ZIGZAG",
    ),
    # python/sglang/srt/debug_utils/comparator/dims_spec/modifier_parser.py
    "modifier parser: raise, continue and raise before the site": (
        """
        def _parse_modifier_token(modifier_token: str, dim_token: str) -> ParallelModifier:
            axis_str: str
            qualifiers_str: str
            if ":" in modifier_token:
                axis_str, qualifiers_str = modifier_token.split(":", maxsplit=1)
            else:
                axis_str, qualifiers_str = modifier_token, ""

            axis_str = axis_str.strip()
            axis: Optional[ParallelAxis] = _AXIS_LOOKUP.get(axis_str)
            if axis is None:
                raise ValueError(
                    f"Unknown axis {axis_str!r} in modifier {modifier_token!r} "
                    f"of dim spec: {dim_token!r}"
                )

            ordering: Optional[Ordering] = None
            reduction: Optional[Reduction] = None

            for q_str in (q.strip() for q in qualifiers_str.split("+") if q.strip()):
                if q_str == "sharded":
                    continue
                qualifier: Optional[Ordering | Reduction] = _QUALIFIER_LOOKUP.get(q_str)
                if qualifier is None:
                    raise ValueError(
                        f"Unknown qualifier {q_str!r} in modifier "
                        f"{modifier_token!r} of dim spec: {dim_token!r}"
                    )
                if isinstance(qualifier, Ordering):
                    if ordering is not None:
                        raise ValueError(  # <-
                            f"Multiple ordering values in modifier "
                            f"{modifier_token!r} of dim spec: {dim_token!r}"
                        )
                    ordering = qualifier
        """,
        ["not (axis is None)", 'not (q_str == "sharded")', "not (qualifier is None)"],
        "axis is not None"
        ' and q_str in (q.strip() for q in qualifiers_str.split("+") if q.strip())'
        ' and q_str != "sharded" and qualifier is not None'
        " and isinstance(qualifier, Ordering) and ordering is not None",
    ),
    # python/sglang/srt/arg_groups/overrides.py (run_post_process_pass)
    "overrides: a try whose handler falls through adds nothing": (
        """
        def run_post_process_pass(server_args: Any, fn: Callable[..., Any]) -> None:
            declared = fn(ResolvedView(server_args, overlay=_declaration_overlay(server_args)))
            if not isinstance(declared, dict):
                raise TypeError(
                    f"post-process pass {fn.__qualname__} must return a dict, "
                    f"got {type(declared).__name__}"
                )
            if declared:
                try:
                    published = get_context().server_args
                except ValueError:
                    published = None
                if published is server_args:
                    raise ValueError(  # <-
                        f"run_post_process_pass({fn.__qualname__!r}) declared "
                        f"{sorted(declared)} on the published config"
                    )
        """,
        ["not (not isinstance(declared, dict))"],
        "isinstance(declared, dict) and declared and published is server_args",
    ),
}


@pytest.mark.parametrize("name", list(SGLANG))
def test_sglang_sites(name: str) -> None:
    source, want_exits, want_text = SGLANG[name]
    site = marked(source)
    assert exits(site) == want_exits
    assert condition_of(site).text() == want_text


# -- the Condition model ------------------------------------------------------------
def cond(*exits: tuple[str, str, bool]) -> Condition:
    return condition_from(
        (), [Guard(kind, test, negated, i + 1) for i, (kind, test, negated) in enumerate(exits)]
    )


@pytest.mark.parametrize(
    ("exits", "text", "conjuncts"),
    [
        ([], "True", []),
        ([("exit", "a or b", True)], "not a and not b", ["not a", "not b"]),
        ([("exit", "a and b", True)], "not a or not b", ["not a or not b"]),
        (
            [("exit", "x is None", True), ("asserted", "y", False)],
            "x is not None and y",
            ["x is not None", "y"],
        ),
        ([("exit", "not (x is not None)", False)], "x is None", ["x is None"]),
        ([("exit", "a <= b", True)], "a > b", ["a > b"]),
        ([("exit", "(m := f()) is None", True)], "(m := f()) is not None", None),
        ([("exit", "m := f()", False), ("exit", "x", False)], "(m := f()) and x", None),
        ([("exit", "m := f()", True)], "not (m := f())", None),
        ([("exit", "a b c", True)], "not (a b c)", None),
        ([("exit", "a if b else c", True)], "not (a if b else c)", None),
        ([("exit", "a + b", True)], "not (a + b)", None),
        ([("exit", "a < b < c", True)], "not (a < b < c)", None),
        ([("exit", "x", True), ("exit", "x or y", False)], "not x and y", ["not x", "y"]),
        ([("exit", "a", True), ("asserted", "a", False)], "False", ["False"]),
        (
            [("exit", "a", True), ("exit", "b", True), ("exit", "a and c", True)],
            "not a and not b",
            None,
        ),
        ([("exit", "True", True)], "False", None),
        ([("exit-while", "0", True)], "True", []),
        ([("exit", "(a or b) and c", True)], "(not a and not b) or not c", None),
    ],
)
def test_condition_text(
    exits: list[tuple[str, str, bool]], text: str, conjuncts: list[str] | None
) -> None:
    got = cond(*exits)
    assert got.text() == text
    assert "not not" not in text and "not (not" not in text
    if conjuncts is not None:
        assert [c.text() for c in got.conjuncts()] == conjuncts


def test_condition_json_round_trip() -> None:
    got = cond(
        ("exit", "a or b", True), ("exit", "c and d", True), ("exit-except", "KeyError", True)
    )
    assert got.text() == (
        "not a and not b and (not c or not d) and try body raised no KeyError (except at line 3)"
    )
    data = json.loads(json.dumps(got.to_json()))
    assert data["op"] == "and"
    assert data["args"][0] == {"atom": "a", "negated": True, "kind": "expr", "text": "not a"}
    assert data["args"][2]["op"] == "or"
    assert data["args"][3]["kind"] == "raised"
    assert Condition.from_json(data) == got
    assert Condition.from_json(Condition.TRUE.to_json()) is Condition.TRUE
    assert [a.atom for a in got.atoms()] == [
        "a",
        "b",
        "c",
        "d",
        "try body raised KeyError (except at line 3)",
    ]


def test_with_try_and_finally_add_nothing() -> None:
    guards = [
        Guard("with", "lock", False, 1),
        Guard("try", "", False, 2),
        Guard("try-else", "", False, 3),
        Guard("finally", "", False, 4),
        Guard("for-else", "x in xs", False, 5),
    ]
    assert condition_from(guards).is_true
    assert condition_from([Guard("while-else", "q.busy()", False, 1)]).text() == "not q.busy()"


def test_many_atoms_are_flattened_not_simplified() -> None:
    exits = [("exit", f"x == {i}", True) for i in range(100)]
    got = cond(*exits)
    assert len(got.conjuncts()) == 100
    assert got.conjuncts()[-1].text() == "x != 99"


def test_each_atom_comes_from_the_guard_that_requires_it() -> None:
    """model_hook.py:235 and receiver.py:2579 (v0.5.19): an atom is placed
    at an exit or guard whose test is that atom alone (``if not x: return``
    too), else at the last one that requires it by itself, never at an exit
    that only reads it (``if flag and not dsa: raise``)."""
    from miner.analysis.condition import reach_of

    exits = [
        Guard("exit", "split and not is_dsa(h)", True, 87),
        Guard("exit", "not data", True, 90),
    ]
    guards = [
        Guard("if", "is_dsa(h)", False, 154),
        Guard("if", 'split and mode != "prefill"', False, 224),
        Guard("if", "data and ok", False, 230),
    ]
    found = reach_of(guards, exits)
    assert found.condition.text() == 'split and is_dsa(h) and data and mode != "prefill" and ok'
    assert {a.shown: found.origin(a).line for a in found.condition.atoms()} == {
        "split": 224,
        "is_dsa(h)": 154,
        "data": 90,
        'mode != "prefill"': 224,
        "ok": 230,
    }


def test_a_literal_and_an_or_come_from_the_exit_that_can_require_them() -> None:
    """serving_hook.py:94 (v0.5.19): ``--ssl-keyfile`` set is required by
    the exit ``if certfile and not keyfile: raise`` (line 39, given the
    certfile), never by ``if keyfile and not certfile: raise`` (line 35),
    which can only require the keyfile unset; ``isfile(keyfile)`` (``not
    keyfile or isfile(keyfile)`` with ``keyfile`` required) comes from the
    exit at line 53 that makes it necessary."""
    from miner.analysis.condition import reach_of

    exits = [
        Guard("exit", "keyfile and not certfile", True, 35),
        Guard("exit", "certfile and not keyfile", True, 39),
        Guard("exit", "keyfile and not isfile(keyfile)", True, 53),
        Guard("exit", "refresh and not (certfile and keyfile)", True, 68),
    ]
    found = reach_of([Guard("if", "refresh", False, 93)], exits)
    lines = {c.text(): found.origin_of(c).line for c in found.condition.conjuncts()}
    assert lines == {
        "keyfile": 39,
        "isfile(keyfile)": 53,  # resolved against ``keyfile``: not ``not keyfile or ...``
        "certfile": 35,
        "refresh": 93,
    }


@pytest.mark.parametrize(
    ("said", "negative"),
    [
        (
            "try body raised one of (ValueError, TypeError) (except at line 681)",
            "try body raised none of (ValueError, TypeError) (except at line 681)",
        ),
        (
            "try body raised an exception (except at line 3)",
            "try body raised no exception (except at line 3)",
        ),
        (
            "try body raised KeyError (except at line 3)",
            "try body raised no KeyError (except at line 3)",
        ),
    ],
)
def test_a_flipped_handler_atom_is_spelled_as_the_builder_spells_it(
    said: str, negative: str
) -> None:
    """serving_chat.py:681 (v0.5.19) read "try body raised no one of (...)"."""
    from miner.analysis.wording import flip, plural

    atom = Condition("atom", atom=said, negated=False, kind="raised", shown=said)
    assert flip(atom).shown == negative
    assert flip(flip(atom)).shown == said
    assert (plural(1, "more condition"), plural(2, "more function")) == (
        "1 more condition",
        "2 more functions",
    )


def test_an_or_operand_loses_the_atoms_the_and_rules_out() -> None:
    """serving_hook.py:64 (v0.5.19): ``certfile`` and ``keyfile`` are both
    needed (either alone raises at line 36 or 40, neither at line 45), so
    ``keyfile or not certfile`` reads ``keyfile``; each is placed at the
    exit that makes it necessary."""
    from miner.analysis.condition import absorbed, reach_of

    exits = [
        Guard("exit", "keyfile and not certfile", True, 35),
        Guard("exit", "certfile and not keyfile", True, 39),
        Guard("exit", "(not certfile and not keyfile) and (ca)", True, 44),
    ]
    found = reach_of([Guard("if", "ca and not isfile(ca)", False, 63)], exits)
    lines = {c.text(): found.origin_of(c).line for c in found.condition.conjuncts()}
    assert lines == {"keyfile": 39, "certfile": 35, "ca": 63, "not isfile(ca)": 63}
    a, b = (Condition("atom", atom=x, kind="expr", shown=x) for x in ("a", "b"))
    not_a = Condition("atom", atom="a", negated=True, kind="expr", shown="not a")
    assert absorbed(Condition("and", (a, Condition("or", (not_a, b))))) == Condition("and", (a, b))
    assert absorbed(Condition("and", (a, Condition("or", (a, b))))) == a


def test_implied_is_decided_by_every_assignment_of_the_atoms() -> None:
    first = condition_from([Guard("if", "key and not cert", False, 1)])
    rest = condition_from(
        [Guard("if", "key", False, 2), Guard("if", "os.path.isfile(key)", False, 3)]
    )
    cert = condition_from([Guard("if", "cert", False, 4)])
    # key set, its file found, cert unset: the first check fires
    assert implied(first, [rest], [cert])
    # key unknown: it need not
    assert not implied(first, [], [cert])
    # nothing meets both "cert" and "not cert": anything follows
    assert implied(Condition.FALSE, [cert], [cert])
    assert not implied(Condition.FALSE, [rest], [cert])


def test_atom_value_decides_only_atoms_of_names_literals_and_comparisons() -> None:
    def atom(text: str) -> Condition:
        return Condition("atom", atom=text, kind="expr", shown=text)

    assert atom_value(atom("shard_dim is None"), {"shard_dim": 0}) is False
    assert atom_value(atom("x < 0 or x >= n"), {"x": 1, "n": 2}) is False
    assert atom_value(atom('mode not in ("a", "b")'), {"mode": "c"}) is True
    assert atom_value(atom("not enabled"), {"enabled": 0}) is True
    assert atom_value(atom("0 < x <= 8"), {"x": 9}) is False
    # not decided: `is` against a non-singleton, a failing comparison, a
    # name without a value, a call, an attribute, arithmetic
    assert atom_value(atom("x is 3"), {"x": 3}) is None
    assert atom_value(atom("x < y"), {"x": 0, "y": None}) is None
    assert atom_value(atom("x < y"), {"x": 0}) is None
    assert atom_value(atom("f(x)"), {"x": 1}) is None
    assert atom_value(atom("x.size > 1"), {"x": 1}) is None
    assert atom_value(atom("x % 2 == 0"), {"x": 1}) is None
    assert atom_names(atom("x.size > 1")) == frozenset()
    assert atom_names(atom("a == b")) == {"a", "b"}


def test_possible_is_false_only_when_every_completion_is_false() -> None:
    a = Condition("atom", atom="a", kind="expr", shown="a")
    b = Condition("atom", atom="b", kind="expr", shown="b")
    not_b = Condition("atom", atom="b", negated=True, kind="expr", shown="not b")
    both = Condition("and", (a, b))
    either = Condition("or", (a, not_b))
    assert possible(both, {}) and possible(both, {"a": True})
    assert not possible(both, {"a": False})
    assert possible(either, {"a": False})
    assert not possible(either, {"a": False, "b": True})
    assert not possible(Condition.FALSE, {}) and possible(Condition.TRUE, {"a": False})
