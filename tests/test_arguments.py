"""What the calls of a raising function give the parameters its guards test
(:mod:`miner.analysis.arguments`), on small files read as the facts read them."""

from __future__ import annotations

import textwrap
from dataclasses import replace

from test_audience import site

from miner.analysis.arguments import Argument, _assigned_above, call_arguments
from miner.analysis.callers import Caller
from miner.analysis.code import one_line
from miner.model import Site


def _site(path: str, line: int, scope: str) -> Site:
    return replace(site(), path=path, line=line, end_line=line, scope=scope)


FILES = {
    "m.py": textwrap.dedent(
        """
        class Box:
            def resize(self, width, height=1, *, mode):
                if width <= 0 or mode not in ("a", "b"):
                    raise ValueError("bad size")


        def check(steps, limit):
            if steps > limit:
                raise ValueError("too many steps")


        def user(box, req):
            box.resize(req.width, mode="a")
            Box.resize(box, 3, mode="b")
            size = (
                req.w * 2
            )
            check(req.steps, limit=64)
            check(**req.extra)
        """
    ).lstrip("\n"),
}
DATA = {p: t.encode() for p, t in FILES.items()}


def test_arguments_of_a_bound_method_and_keywords() -> None:
    sites = [_site("m.py", 4, "Box.resize")]
    calls = {"resize": (Caller("resize", "user", "m.py", 13),)}
    out = call_arguments(DATA, sites, calls, {"m.py": {"width", "mode", "height"}})
    assert out == {
        ("m.py", "Box.resize", "width"): (Argument("m.py", 13, "user", "req.width"),),
        ("m.py", "Box.resize", "mode"): (Argument("m.py", 13, "user", '"a"'),),
    }  # ``height`` is left to its default: nothing is claimed of it


def test_a_method_called_on_its_class_or_with_keywords_unpacked_is_not_read() -> None:
    sites = [_site("m.py", 4, "Box.resize"), _site("m.py", 9, "check")]
    calls = {
        "resize": (Caller("resize", "user", "m.py", 13), Caller("resize", "user", "m.py", 14)),
        "check": (Caller("check", "user", "m.py", 18), Caller("check", "user", "m.py", 19)),
    }
    assert call_arguments(DATA, sites, calls, {"m.py": {"width", "steps"}}) == {}
    one = {"check": (Caller("check", "user", "m.py", 18),)}
    assert call_arguments(DATA, sites, one, {"m.py": {"steps", "limit"}}) == {
        ("m.py", "check", "steps"): (Argument("m.py", 18, "user", "req.steps"),),
        ("m.py", "check", "limit"): (Argument("m.py", 18, "user", "64"),),
    }


def test_the_assignment_that_reaches_the_call() -> None:
    lines = textwrap.dedent(
        """
        def caller(req, fast):
            if fast:
                mode = "a"
            else:
                mode = "b"
            run(mode)
            size = (
                req.width
                if req.width is not None
                else 64
            )
            run(size)
            label = "x#y"
            run(label)
            count = 1
            if fast:
                run(count)
        """
    ).split("\n")[1:]
    # set in an if/else branch that ended before the call: either value may reach it
    assert _assigned_above(lines, 6, "mode") == (0, "")
    assert _assigned_above(lines, 12, "size") == (
        7,
        "(req.width if req.width is not None else 64)",
    )
    assert _assigned_above(lines, 14, "label") == (0, "")  # a '#' inside a string is not read
    assert _assigned_above(lines, 17, "count") == (15, "1")  # the call in a block below it


def test_one_line_joins_code_and_drops_loose_spaces_and_trailing_commas() -> None:
    assert one_line("get_config(\n    self.config,\n)") == "get_config(self.config)"
    assert one_line("@router.post( '/x',\n  response_model=None, )") == (
        "@router.post('/x', response_model=None)"
    )
    assert one_line("{ 'a': [1, 2, ] }") == "{'a': [1, 2]}"
    assert one_line("a  if  b\telse c") == "a if b else c"
    # the comma of a tuple of one stays; a string's brackets are left as written
    assert (
        one_line('("compact",) if x else (\n    "static",\n)')
        == '("compact",) if x else ("static",)'
    )
    assert one_line("a[i,] + [i,] + f(i,)") == "a[i,] + [i] + f(i)"
    assert one_line('f( "( a, )", b )') == 'f("( a, )", b)'
