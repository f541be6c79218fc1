"""Messages built in steps (locals followed to the raise), the exception
classes of a repository that format their text, and why a message stays
dynamic. Each source is mined by the unit planner, by a whole-module libcst
parse and by the ``ast`` fallback; the records must agree."""

from __future__ import annotations

import ast
import textwrap

import pytest

from miner.extract.ast_fallback import collect_ast
from miner.extract.formats import exception_format
from miner.extract.runner import extract_file
from miner.extract.text import decode_source
from miner.model import MessagePart, Site


def mine(source: str, path: str = "pkg/mod.py") -> list[Site]:
    data = textwrap.dedent(source).lstrip("\n").encode()
    partial = extract_file(path, "0" * 40, data)
    full = extract_file(path, "0" * 40, data, partial=False)
    assert partial.status == "mined", partial.reason
    assert partial.sites == full.sites
    text = decode_source(data)
    fallback = collect_ast(ast.parse(text.text), path=path, lines=text.lines)

    def plain(site: Site) -> dict[str, object]:
        return {k: v for k, v in site.to_json().items() if k != "parser"}

    assert [plain(s) for s in fallback] == [plain(s) for s in partial.sites]
    return list(partial.sites)


def only(source: str) -> Site:
    sites = mine(source)
    assert len(sites) == 1, sites
    return sites[0]


# -- steps through locals ------------------------------------------------------


def test_message_appended_under_if_is_an_optional_part() -> None:
    # In the spirit of SGLang's pool_configurator.py (MemoryPoolConfig.__post_init__).
    site = only(
        """
        class PoolConfig:
            def __post_init__(self):
                if self.max_tokens <= 0:
                    msg = "Out of memory. Try a larger --mem-fraction."
                    if self.fraction is not None:
                        msg += f" Current value: fraction={self.fraction}"
                    raise RuntimeError(msg)
        """
    )
    assert site.message == (
        "Out of memory. Try a larger --mem-fraction. Current value: fraction={self.fraction}"
    )
    assert site.message_parts == (
        MessagePart(text="Out of memory. Try a larger --mem-fraction."),
        MessagePart(text=" Current value: fraction=", optional=1),
        MessagePart(expr="self.fraction", optional=1),
    )
    assert (site.message_kind, site.message_style, site.message_source) == (
        "template",
        "steps",
        "msg",
    )
    assert site.message_reason is None
    assert site.to_json()["message_parts"][1] == {
        "text": " Current value: fraction=",
        "optional": 1,
    }


def test_straight_appends_and_two_branches_make_two_groups() -> None:
    site = only(
        """
        def check(a, b, verbose):
            msg = "bad input"
            msg += f" ({a})"
            if verbose:
                msg += " see "
                msg += f"{b!r}"
            elif a:
                msg += "!"
            if b:
                msg += " never"
                return  # a branch that leaves is not on the way to the raise
            raise ValueError(msg)
        """
    )
    assert site.message == "bad input ({a}) see {b!r}!"
    assert site.message_parts == (
        MessagePart(text="bad input ("),
        MessagePart(expr="a"),
        MessagePart(text=")"),
        MessagePart(text=" see ", optional=1),
        MessagePart(expr="b", conversion="r", optional=1),
        MessagePart(text="!", optional=2),
    )


def test_join_of_a_local_list_built_by_appends() -> None:
    site = only(
        """
        def report(items, verbose):
            parts = ["Bad items:", f"count={len(items)}"]
            parts.append("first: " + items[0])
            if verbose:
                parts.append(f"all={items!r}")
            raise ValueError("\\n".join(parts))
        """
    )
    assert site.message == "Bad items:\ncount={len(items)}\nfirst: {items[0]}\nall={items!r}"
    assert site.message_parts == (
        MessagePart(text="Bad items:\ncount="),
        MessagePart(expr="len(items)"),
        MessagePart(text="\nfirst: "),
        MessagePart(expr="items[0]"),
        MessagePart(text="\nall=", optional=1),
        MessagePart(expr="items", conversion="r", optional=1),
    )
    assert site.message_style == "join"


def test_join_with_a_leading_optional_item_keeps_the_separator_in_its_group() -> None:
    site = only(
        """
        def report(name, strict):
            lines = []
            if strict:
                lines.append("strict mode")
            lines.append(f"{name} is missing")
            raise KeyError(", ".join(lines))
        """
    )
    assert site.message == "strict mode, {name} is missing"
    assert site.message_parts == (
        MessagePart(text="strict mode, ", optional=1),
        MessagePart(expr="name"),
        MessagePart(text=" is missing"),
    )


def test_join_of_a_spelled_out_list_and_of_a_generator() -> None:
    spelled, generated = mine(
        """
        def f(a, names):
            raise ValueError(" ".join(["a is", str(a)]))

        def g(names):
            raise ValueError(", ".join(n for n in names))
        """
    )
    assert (spelled.message, spelled.message_style) == ("a is {str(a)}", "join")
    assert (generated.message_kind, generated.message_reason) == ("dynamic", "non-literal-join")


def test_percent_format_and_concat_through_locals() -> None:
    percent, fmt, concat = mine(
        """
        def f(x):
            template = "value %s is bad"
            raise ValueError(template % x)

        def g(x):
            pattern = "expected {}, got {!r}"
            raise ValueError(pattern.format(1, x))

        def h(x):
            head = f"bad {x}"
            raise ValueError(head + ": try again")
        """
    )
    assert (percent.message, percent.message_style) == ("value {x} is bad", "percent")
    assert (fmt.message, fmt.message_style) == ("expected {1}, got {x!r}", "format")
    assert (concat.message, concat.message_style) == ("bad {x}: try again", "concat")


def test_assignment_that_uses_the_local_itself_is_followed() -> None:
    site = only(
        """
        def f(n):
            msg = "too many"
            msg = msg + f" ({n})"
            raise ValueError(msg)
        """
    )
    assert site.message == "too many ({n})"


def test_not_straight_line_keeps_todays_behaviour() -> None:
    loop, branches, once = mine(
        """
        def f(xs):
            msg = "start"
            for x in xs:
                msg += f" {x}"
            raise ValueError(msg)

        def g(c):
            if c:
                msg = "a"
            else:
                msg = "b"
            raise ValueError(msg)

        def h(c):
            if c:
                msg = "only once"
            raise ValueError(msg)
        """
    )
    assert (loop.message_kind, loop.message_reason) == ("dynamic", "variable-branches")
    assert (branches.message_kind, branches.message_reason) == ("dynamic", "variable-branches")
    # A local assigned once in the function: its value, as before steps were followed.
    assert (once.message, once.message_kind) == ("only once", "literal")


def test_list_mentioned_elsewhere_is_not_resolved() -> None:
    site = only(
        """
        def f(extra):
            parts = ["a"]
            add_more(parts, extra)
            raise ValueError(" ".join(parts))
        """
    )
    assert (site.message_kind, site.message_reason) == ("dynamic", "non-literal-join")


# -- why a message stays dynamic -------------------------------------------------

REASON_CASES = [
    ("def f(msg):\n    raise ValueError(msg)\n", "parameter"),
    ("def f(x):\n    msg = describe(x)\n    raise ValueError(msg)\n", "variable-from-call"),
    ("def f(x):\n    msg = x or y\n    raise ValueError(msg)\n", "variable"),
    ("def f(x):\n    raise ValueError(describe(x))\n", "call"),
    (
        "def f(x):\n    try:\n        g()\n    except OSError as e:\n        raise ValueError(e)\n",
        "caught-exception",
    ),
    ("def f(self):\n    raise ValueError(self.message)\n", "attribute"),
    ("def f(e):\n    raise ValueError(e.args[0])\n", "attribute"),
    ("def f():\n    raise ValueError(MESSAGE)\n", "global"),
    ("def f(self):\n    raise self.error\n", "exception-instance"),
    ("def f(*args):\n    raise ValueError(*args)\n", "star-args"),
    ("def f(a, b):\n    raise ValueError(a if b else 'x')\n", "other"),
]


@pytest.mark.parametrize(("source", "reason"), REASON_CASES)
def test_dynamic_message_reason(source: str, reason: str) -> None:
    site = only(source)
    assert (site.message_kind, site.message_reason) == ("dynamic", reason)


def test_rendered_messages_have_no_reason() -> None:
    site = only('def f(x):\n    raise ValueError(f"bad {x}")\n')
    assert site.message_reason is None
    assert site.to_json()["message_reason"] is None


# -- exception classes that format their text -----------------------------------

CLASSES = """
class TransferError(Exception):
    def __init__(self, room: int, reason: str, from_peer: bool = False):
        super().__init__(reason)
        self.room = room
        self.reason = reason
        self.from_peer = from_peer

    def __str__(self):
        return f"TransferError(room={self.room}): {self.reason}"


class ContractError(ValueError):
    def __init__(self, component: str, detail: str) -> None:
        super().__init__(f"Contract {component} {detail}")


class Plain(Exception):
    pass
"""


def test_exception_format_of_str_and_of_init() -> None:
    tree = ast.parse(CLASSES)
    lines = CLASSES.split("\n")
    found = {
        node.name: exception_format(node, "pkg/errors.py", lines)
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }
    transfer, contract = found["TransferError"], found["ContractError"]
    assert found["Plain"] is None
    assert transfer is not None and contract is not None
    assert transfer.parts == (
        MessagePart(text="TransferError(room="),
        MessagePart(expr="room"),
        MessagePart(text="): "),
        MessagePart(expr="reason"),
    )
    assert (transfer.positional, transfer.defaults, transfer.line) == (
        ("room", "reason", "from_peer"),
        (("from_peer", "False"),),
        10,
    )
    assert contract.parts == (
        MessagePart(text="Contract "),
        MessagePart(expr="component"),
        MessagePart(text=" "),
        MessagePart(expr="detail"),
    )


FORMAT_FILES = {
    "pkg/__init__.py": "",
    "pkg/errors.py": CLASSES,
    "pkg/sender.py": """
from pkg.errors import ContractError, TransferError
from pkg import errors


class Sender:
    def fail(self, failure_reason):
        if failure_reason is not None:
            raise TransferError(self.room, failure_reason)
        raise TransferError(self.room, "sender failed", from_peer=True)

    def check(self, n, component):
        raise ContractError(component, f"must be {n}")

    def other(self):
        raise errors.TransferError(reason="peer gone", room=self.room)
""",
}


def test_raises_of_formatting_classes_take_the_class_text(make_repo) -> None:
    from miner.mining.extraction import MineOptions
    from miner.pipeline import mine as mine_repo

    repo = make_repo(FORMAT_FILES, tag="v1")
    result = mine_repo(str(repo), "v1", options=MineOptions(jobs=0, cache=False))
    sites = [s for s in result.sites if s.path == "pkg/sender.py"]
    assert [(s.line, s.message, s.message_kind, s.message_source) for s in sites] == [
        (
            9,
            "TransferError(room={self.room}): {failure_reason}",
            "template",
            "self.room, failure_reason",
        ),
        (
            10,
            "TransferError(room={self.room}): sender failed",
            "template",
            'self.room, "sender failed"',
        ),
        (13, "Contract {component} must be {n}", "template", 'component, f"must be {n}"'),
        (16, "TransferError(room={self.room}): peer gone", "template", 'self.room, "peer gone"'),
    ]
