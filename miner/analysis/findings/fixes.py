"""Fix rules: a concrete change that makes the raise condition false, with
its exact command-line words, environment line or command, and its cost when
a help text states one. Each rule reads one kind of cause origin; the
verifier (:mod:`.verify`) drops a fix whose change does not make the
origin's constraint false or that the option does not accept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from miner.analysis.config import Option
from miner.analysis.evidence import help_sentence, lead_sentences
from miner.analysis.findings.causes import evidence_of
from miner.analysis.findings.reading import Reading
from miner.analysis.findings.values import satisfies
from miner.model import Finding, FixAction, Origin, OriginKind

#: Distributions a fix never asks to install: the repository's own.
OWN_DISTRIBUTIONS = frozenset({"sglang"})


def resolved_meeting(reading: Reading, opt: Option, origin: Origin) -> list[tuple[str, str]]:
    """(value, ``path:line``) of each literal the argument handling stores
    into ``opt``'s setting that meets ``origin``'s constraint: left out,
    the option may still end up raising (``auto`` -> ``extra_buffer``)."""
    c = origin.constraint
    return [
        (r.value, f"{r.path}:{r.line}")
        for r in reading.facts.resolved.get(opt.name, ())
        if satisfies(c.op, c.values, r.value) is True and reading.config.near(opt, r.path)
    ]


def _flag_fix(
    reading: Reading,
    origin: Origin,
    opt: Option,
    rule: str,
    action: FixAction,
    words: tuple[str, ...],
    value: str | None,
) -> Finding:
    """A fix finding about ``opt`` (no decision: the rules choose)."""
    quote = ""
    if opt.help and opt.help != "==SUPPRESS==":
        quote = (help_sentence(opt, value) if value else None) or (
            lead_sentences(opt.help) if action in ("on", "off", "drop") else ""
        )
    meeting = resolved_meeting(reading, opt, origin) if action == "set" else []
    return Finding(
        kind="fix",
        rule=rule,
        origin=origin.kind.value,
        name=origin.name,
        owner=origin.owner,
        op=origin.constraint.op,
        values=origin.constraint.values,
        value=value,
        words=words,
        command=reading.config.command_of(opt) or "",
        action=action,
        default=opt.default,
        quote=quote,
        quote_at=f"{opt.path}:{opt.line}" if quote else "",
        source="help" if quote else "",
        resolves=tuple(dict.fromkeys(v for v, _ in meeting)),
        resolved_at=tuple(dict.fromkeys(w for _, w in meeting)),
        evidence=tuple(dict.fromkeys((*evidence_of(origin), *(w for _, w in meeting)))),
    )


def _flags(reading: Reading) -> Iterable[tuple[Origin, Option]]:
    """The cause flags that can make the site unreachable alone
    (:meth:`Reading.alone`), with their options (those found in the model)."""
    for origin in reading.narrowed(OriginKind.FLAG):
        opt = reading.option(origin)
        if opt is not None and opt.flag is not None and reading.alone(origin):
            yield origin, opt


def _unquoted(text: str | None) -> str | None:
    return None if text is None else text.strip("'\"")


def fix_flag_value(reading: Reading) -> Iterable[Finding]:
    """**fix-flag-value**: set a flag that takes a value to another of its
    choices, one its constraint does not accept (``--mamba-radix-cache-strategy
    no_buffer`` when ``extra_buffer`` or ``extra_buffer_lazy`` raise), never
    its default (leaving the flag out is :func:`fix_flag_leave_out`); for a
    flag the condition needs to differ from one value (``!=`` / ``not in``)
    without choices, that value. Cost: the help sentence naming the value.
    Caveat (``resolves``): values the argument handling stores into the
    setting that would raise, with their ``path:line``."""
    for origin, opt in _flags(reading):
        c = origin.constraint
        if opt.switch or opt.is_bool or c.op not in ("==", "in", "!=", "not in"):
            continue
        default = _unquoted(opt.default)
        if opt.choices:
            candidates = [v for v in opt.choices if v != default]
        else:
            # the default is a leave-out fix (fix_flag_leave_out), never a value to set
            candidates = (
                [v for v in c.values[:1] if v != default] if c.op in ("!=", "not in") else []
            )
        value = next((v for v in candidates if satisfies(c.op, c.values, v) is False), None)
        if value is not None:
            words = (opt.flag or "", value)
            yield _flag_fix(reading, origin, opt, "fix-flag-value", "set", words, value)


def fix_flag_leave_out(reading: Reading) -> Iterable[Finding]:
    """**fix-flag-leave-out**: leave out a flag that takes a value when its
    default does not meet the constraint and the argument handling stores no
    value that does; or, when a resolver of the flag left out picks the
    raising value only under a requirement that this error's condition makes
    false (``host_pool`` needs ``not uses_ssm_state(...)``, the raise needs
    ``ctx.is_hybrid_ssm``), the value it picks instead (``value``), quoting
    the requirement and citing the resolver's line."""
    for origin, opt in _flags(reading):
        c = origin.constraint
        if opt.switch or opt.is_bool or c.op in ("any", "instance", "not instance"):
            continue
        if satisfies(c.op, c.values, opt.default) is not False:
            continue
        plain = _flag_fix(reading, origin, opt, "fix-flag-leave-out", "leave-out", (), None)
        finding = _with_choice(reading, origin, opt, plain)
        if finding is not None:
            yield finding


def _with_choice(reading: Reading, origin: Origin, opt: Option, fix: Finding) -> Finding | None:
    """``fix`` with what a flag left out resolves to: a resolver that picks
    the raising value only under a requirement this error's condition makes
    false (``host_pool`` needs ``not uses_ssm_state(...)``, the raise needs
    ``is_hybrid_ssm``) picks its other value (``value``), with the
    requirement quoted; unchanged (its default) when nothing may store a
    raising value; None when something may."""
    c = origin.constraint
    tested = reading.tested()
    raising = [
        ch
        for ch in reading.facts.choices.get(opt.name, ())
        if satisfies(c.op, c.values, ch.value) is True and reading.config.near(opt, ch.path)
    ]
    for choice in raising:
        if not choice.unset_only or satisfies(c.op, c.values, choice.other) is not False:
            continue
        req = next((r for r in choice.requires if tested.get(r.name) is r.negated), None)
        if req is not None:
            return replace(
                fix,
                value=choice.other,
                resolves=(choice.value,),
                resolved_at=(f"{choice.path}:{choice.line}",),
                quote=req.text,
                quote_at=f"{choice.path}:{req.line}",
                source="resolver",
                evidence=(*fix.evidence, f"{choice.path}:{choice.line}"),
            )
    if raising or resolved_meeting(reading, opt, origin):
        return None
    return replace(fix, value=opt.default, resolves=(), resolved_at=())


def fix_flag_switch(reading: Reading) -> Iterable[Finding]:
    """**fix-flag-switch**: turn a switch the other way: drop ``--x`` (a
    ``store_true`` flag off by default) or pass ``--no-x`` (a
    ``BooleanOptionalAction``) when the condition needs it on; pass ``--x``
    when it needs it off. A switch is never given a value. Cost: the first
    sentence of its help text (``--disable-radix-cache``: "Disable
    RadixAttention for prefix caching.")."""
    for origin, opt in _flags(reading):
        op = origin.constraint.op
        if not (opt.switch or opt.is_bool) or op not in ("true", "false"):
            continue
        action = opt.action or ""
        if op == "true" and opt.negation:
            yield _flag_fix(
                reading, origin, opt, "fix-flag-switch", "off", (opt.negation,), "False"
            )
        elif op == "true" and not action.endswith("store_false"):
            yield _flag_fix(
                reading, origin, opt, "fix-flag-switch", "drop", (opt.flag or "",), "False"
            )
        elif op == "false" and not action.endswith("store_false"):
            yield _flag_fix(
                reading, origin, opt, "fix-flag-switch", "on", (opt.flag or "",), "True"
            )


def fix_env(reading: Reading) -> Iterable[Finding]:
    """**fix-env**: unset an environment variable the condition needs set or
    true (``unset SGLANG_X``), or set it to ``0`` when its default is itself
    true; set one the condition needs false to ``1``. The exact shell line
    is ``words``."""
    for origin in reading.narrowed(OriginKind.ENV):
        if not reading.alone(origin):
            continue
        c = origin.constraint
        default_raises = satisfies(c.op, c.values, origin.default) is True
        if c.op in ("true", "set", "==", "in") and not default_raises:
            action: FixAction = "unset"
            words: tuple[str, ...] = ("unset", origin.name)
            value = origin.default
        elif c.op == "true":
            action, words, value = "set-env", (f"{origin.name}=0",), "0"
        elif c.op == "false":
            action, words, value = "set-env", (f"{origin.name}=1",), "1"
        else:
            continue
        yield Finding(
            kind="fix",
            rule="fix-env",
            origin=origin.kind.value,
            name=origin.name,
            owner=origin.owner,
            op=c.op,
            values=c.values,
            value=value,
            words=words,
            command=reading.config.entry_point or "",
            action=action,
            default=origin.default,
            evidence=evidence_of(origin),
        )


def fix_install(reading: Reading) -> Iterable[Finding]:
    """**fix-install**: install the distribution of a package the condition
    needs present (an import that failed, an availability probe that is
    false, ``None`` from a failed optional import): ``pip install <dist>``,
    the distribution as the origin records it (``flashinfer-python`` for
    ``flashinfer``); for a version below a bound, ``pip install
    '<dist>>=<bound>'``. Never the repository's own distribution."""
    for origin in reading.narrowed(OriginKind.PACKAGE):
        if not reading.alone(origin):
            continue
        c, dist = origin.constraint, origin.owner or origin.name
        if dist in OWN_DISTRIBUTIONS or not dist.replace("-", "_").replace(".", "_").isidentifier():
            continue
        if c.op in ("missing", "false", "is None"):
            spec = dist
        elif c.op in ("<", "<=") and c.values:
            spec = f"{dist}>={c.values[0]}" if c.op == "<" else f"{dist}>{c.values[0]}"
        else:
            continue
        yield Finding(
            kind="fix",
            rule="fix-install",
            origin=origin.kind.value,
            name=origin.name,
            owner=dist,
            op=c.op,
            values=c.values,
            value=spec,
            words=("pip", "install", spec),
            action="install",
            evidence=evidence_of(origin),
        )
