"""Message templates independent of any parser: the builder both extractors
(libcst and the ``ast`` fallback) fill, and the format-string grammars.

A template is kept twice: as ``message`` text (literal braces doubled,
placeholders as ``{expr!conv:spec}``, the way an f-string body reads) and as
``message_parts`` (literal runtime text and placeholders in order), which is
what a matcher needs.
"""

from __future__ import annotations

import codecs
import re
import string
from dataclasses import dataclass, field

from miner.model import DynamicReason, MessageKind, MessagePart, MessageStyle


def escape_braces(text: str) -> str:
    """Literal text as it reads in a template: ``{`` -> ``{{``, ``}`` -> ``}}``."""
    return text.replace("{", "{{").replace("}", "}}")


def unescape_text(raw: str, *, is_raw: bool, is_bytes: bool = False) -> str:
    """Evaluate backslash escapes of string-literal source text.

    ``raw`` is the text between the quotes. Raw literals keep it as it is;
    others evaluate ``\\n``, ``\\x00``, ``\\N{...}``, ``\\u....`` and
    backslash-newline (a continuation), as Python does. Unknown escapes such
    as ``\\d`` stay two characters. For bytes, ``\\u`` and ``\\N`` are not
    escapes and the result is the bytes decoded as UTF-8 (bad bytes shown as
    ``\\xNN``).
    """
    if is_raw:
        return raw
    if is_bytes:
        data = raw.encode("latin-1", "backslashreplace")
        value = codecs.escape_decode(data)[0]
        assert isinstance(value, bytes)
        return value.decode("utf-8", "backslashreplace")
    try:
        return raw.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return raw


@dataclass
class TemplateBuilder:
    """Accumulates a template's parts; merges adjacent literal text of the
    same group (see :attr:`~miner.model.MessagePart.optional`)."""

    parts: list[MessagePart] = field(default_factory=list)
    template: list[str] = field(default_factory=list)
    groups: int = 0
    """How many optional groups the parts hold (numbered 1 .. ``groups``)."""
    group: int | None = None
    """The optional group the parts added now belong to (None: always there)."""

    def text(self, runtime_text: str) -> None:
        if not runtime_text:
            return
        self.template.append(escape_braces(runtime_text))
        self._merge_text(runtime_text, self.group)

    def _merge_text(self, runtime_text: str, group: int | None) -> None:
        last = self.parts[-1] if self.parts else None
        if last is not None and last.expr is None and last.optional == group:
            self.parts[-1] = MessagePart(text=(last.text or "") + runtime_text, optional=group)
        else:
            self.parts.append(MessagePart(text=runtime_text, optional=group))

    def field(
        self,
        expr: str,
        conversion: str | None = None,
        spec: str | None = None,
        *,
        debug: bool = False,
    ) -> None:
        """A placeholder. ``debug`` is the self-documenting ``{expr=}`` form:
        at run time ``expr=`` precedes the value, shown with ``repr`` unless a
        conversion or spec says otherwise."""
        shown = expr + ("=" if debug else "")
        if shown.startswith("{") or shown.endswith("}"):
            # ``{ {k: v} }``: as in an f-string, a space keeps the field's
            # braces from reading as doubled (literal) ones.
            shown = f" {shown} "
        conv_text = f"!{conversion}" if conversion else ""
        spec_text = f":{spec}" if spec is not None else ""
        if debug:
            saved = self.template
            self.template = []
            self.text(expr + "=")
            self.template = saved
            if conversion is None and spec is None:
                conversion = "r"
        self.template.append("{" + shown + conv_text + spec_text + "}")
        self.parts.append(
            MessagePart(expr=expr, conversion=conversion, spec=spec, optional=self.group)
        )

    def extend(self, other: TemplateBuilder) -> None:
        """Append another builder's parts and template text (its optional
        groups numbered after this one's; its required parts join the group
        being built, if any)."""
        shift = self.groups
        for part in other.parts:
            group = self.group if part.optional is None else part.optional + shift
            if part.expr is None:
                self._merge_text(part.text or "", group)
            else:
                self.parts.append(
                    MessagePart(
                        expr=part.expr, conversion=part.conversion, spec=part.spec, optional=group
                    )
                )
        self.groups += other.groups
        self.template.extend(other.template)

    def extend_optional(self, other: TemplateBuilder) -> None:
        """Append ``other`` as one new optional group (present or not at run
        time). ``other`` must hold no optional group itself."""
        assert other.groups == 0
        self.groups += 1
        saved, self.group = self.group, self.groups
        self.extend(other)
        self.group = saved

    @classmethod
    def of_parts(cls, parts: tuple[MessagePart, ...] | list[MessagePart]) -> TemplateBuilder:
        """A builder holding ``parts`` (their optional groups kept)."""
        builder = cls()
        for part in parts:
            builder.group = part.optional
            builder.groups = max(builder.groups, part.optional or 0)
            if part.expr is None:
                builder.text(part.text or "")
            else:
                builder.field(part.expr, part.conversion, part.spec)
        builder.group = None
        return builder

    @property
    def has_fields(self) -> bool:
        return any(p.expr is not None for p in self.parts)

    def message(self) -> str:
        return "".join(self.template)


def enter_group(builder: TemplateBuilder, groups: dict[object, int], key: object) -> None:
    """Make the parts added next belong to the optional group of ``key`` (a
    new group for a key not seen yet), or to no group for None."""
    if key is None:
        builder.group = None
        return
    if key not in groups:
        builder.groups += 1
        groups[key] = builder.groups
    builder.group = groups[key]


@dataclass(frozen=True, slots=True)
class Message:
    """A rendered message: what a site record stores about its message."""

    kind: MessageKind
    style: MessageStyle
    template: str | None = None
    parts: tuple[MessagePart, ...] = ()
    source: str | None = None
    reason: DynamicReason | None = None
    """For a ``dynamic`` message: why (see :data:`~miner.model.DynamicReason`)."""

    @staticmethod
    def none() -> Message:
        return Message(kind="none", style="none")

    @staticmethod
    def dynamic(source: str | None, reason: DynamicReason = "other") -> Message:
        return Message(kind="dynamic", style="expression", source=source, reason=reason)

    @staticmethod
    def of(builder: TemplateBuilder, style: MessageStyle, source: str | None) -> Message:
        """A literal, or a template when the builder holds a placeholder or
        an optional part (the text is then not always the same)."""
        return Message(
            kind="template" if builder.has_fields or builder.groups else "literal",
            style=style,
            template=builder.message(),
            parts=tuple(builder.parts),
            source=source,
        )


_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[#0\- +]*)(?P<width>\*|\d+)?"
    r"(?:\.(?P<prec>\*|\d+))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)


def percent_template(
    fmt: str,
    positional: list[str] | None,
    mapping: dict[str, str] | None,
    whole: str,
) -> TemplateBuilder | None:
    """Render ``fmt % args`` as a template.

    ``positional`` are the source texts of a tuple's elements, ``mapping`` the
    keys and value texts of a dict literal; when neither is known, ``whole``
    (the right operand's text) stands for the single argument (or is indexed
    as ``whole[i]`` when the string has several directives). Returns None when
    the format string has no directive at all.
    """
    builder = TemplateBuilder()
    pos = 0
    index = 0
    directives = [m for m in _PERCENT.finditer(fmt) if m.group("type") != "%"]
    if not directives and "%%" not in fmt:
        return None
    for match in _PERCENT.finditer(fmt):
        builder.text(fmt[pos : match.start()])
        pos = match.end()
        kind = match.group("type")
        if kind == "%":
            builder.text("%")
            continue
        key = match.group("key")
        if key is not None:
            expr = mapping.get(key, f"{whole}[{key!r}]") if mapping else f"{whole}[{key!r}]"
        elif positional is not None:
            expr = positional[index] if index < len(positional) else f"{whole}[{index}]"
        elif len(directives) == 1:
            expr = whole
        else:
            expr = f"{whole}[{index}]"
        index += 1
        conversion = kind if kind in ("r", "a") else None
        flags = match.group("flags") or ""
        width = match.group("width") or ""
        prec = match.group("prec")
        spec_type = "d" if kind in ("i", "u") else ("" if kind in ("s", "r", "a") else kind)
        spec = flags + width + (f".{prec}" if prec is not None else "") + spec_type
        builder.field(expr, conversion, spec or None)
    builder.text(fmt[pos:])
    return builder


def format_template(
    fmt: str,
    positional: list[str],
    keywords: dict[str, str],
    has_star: bool,
) -> TemplateBuilder | None:
    """Render ``fmt.format(*args, **kwargs)`` with argument texts as fields.

    Field names resolve to the argument's source text (``{0.name}`` becomes
    ``{arg.name}``); names not among the keywords keep their own name. Returns
    None when ``fmt`` is not a valid format string.
    """
    builder = TemplateBuilder()
    auto = 0
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return None
    for literal, name, spec, conversion in parsed:
        builder.text(literal)
        if name is None:
            continue
        head, rest = _split_field_name(name)
        if head == "":
            head = str(auto)
            auto += 1
        if head.isdigit():
            idx = int(head)
            expr = positional[idx] if idx < len(positional) and not has_star else f"args[{idx}]"
        else:
            expr = keywords.get(head, head)
        if rest:
            expr = _wrap(expr) + rest
        builder.field(expr, conversion or None, spec or None)
    return builder


def _split_field_name(name: str) -> tuple[str, str]:
    for i, ch in enumerate(name):
        if ch in ".[":
            return name[:i], name[i:]
    return name, ""


_SIMPLE_EXPR = re.compile(r"^[\w.]+$")


def _wrap(expr: str) -> str:
    return expr if _SIMPLE_EXPR.match(expr) else f"({expr})"
