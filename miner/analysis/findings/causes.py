"""Cause rules: which user-controlled origin, with which values, makes the
raise condition true. One rule per origin kind; each returns the findings of
its kind, first first, from the guards that decide the raise, each origin
with its most specific constraint (:meth:`.Reading.causing`). The verifier
(:mod:`.verify`) checks every name and value against the configuration model.
"""

from __future__ import annotations

from collections.abc import Iterable

from miner.analysis.findings.reading import Reading
from miner.analysis.findings.values import satisfies
from miner.model import Finding, Origin, OriginKind


def evidence_of(origin: Origin) -> tuple[str, ...]:
    """``path:line`` of the guard that reads ``origin`` (its chain's first
    hop) and of its definition, each once."""
    out = [f"{h.path}:{h.line}" for h in origin.chain[:1]]
    if origin.defined:
        out.append(origin.defined)
    return tuple(dict.fromkeys(out))


def flag_words(reading: Reading, origin: Origin) -> tuple[str, ...]:
    """The command-line words that give a flag the value its constraint
    needs: ``(flag, value)`` for ``==``/``in`` of a flag that takes a value,
    ``(flag,)`` to turn a switch on, ``(--no-x,)`` to turn a
    ``BooleanOptionalAction`` off; empty when no command line names the
    value (a bound, ``is not None``, a switch left out)."""
    opt = reading.option(origin)
    op, values = origin.constraint.op, origin.constraint.values
    if opt is None or opt.flag is None:
        return ()
    if opt.switch or opt.is_bool:
        if op == "true" and not (opt.action or "").endswith("store_false"):
            return (opt.flag,)
        if op == "false" and opt.negation:
            return (opt.negation,)
        return ()
    if op in ("==", "in") and values:
        return (opt.flag, values[0])
    return ()


def _cause(reading: Reading, origin: Origin, rule: str) -> Finding:
    """The cause finding of ``origin`` (no decision: the rules choose);
    ``value`` is the default when the default itself meets the constraint
    (the user need not have changed anything)."""
    words: tuple[str, ...] = ()
    command = ""
    if origin.kind is OriginKind.FLAG:
        words = flag_words(reading, origin)
        opt = reading.option(origin)
        command = (reading.config.command_of(opt) or "") if opt is not None else ""
    elif origin.kind is OriginKind.ENV:
        words = env_words(origin)
        command = reading.config.entry_point or ""
    c = origin.constraint
    by_default = satisfies(c.op, c.values, origin.default) is True and origin.default is not None
    return Finding(
        kind="cause",
        rule=rule,
        origin=origin.kind.value,
        name=origin.name,
        owner=origin.owner,
        op=c.op,
        values=c.values,
        value=origin.default if by_default else None,
        words=words,
        command=command,
        default=origin.default,
        evidence=evidence_of(origin),
    )


def env_words(origin: Origin) -> tuple[str, ...]:
    """The environment line that gives a variable the value its constraint
    needs (``SGLANG_X=1`` for true, ``SGLANG_X=v`` for ``== v``); empty
    when no one value does."""
    op, values = origin.constraint.op, origin.constraint.values
    if op == "true":
        return (f"{origin.name}=1",)
    if op in ("==", "in") and values:
        return (f"{origin.name}={values[0]}",)
    return ()


def _by_default_last(reading: Reading, origins: Iterable[Origin]) -> list[Origin]:
    """``origins``, those read by an enclosing guard first (not by an
    earlier check the path gets past: :meth:`Reading.alone`), then those
    whose default does not already meet the constraint (the ones the user
    changed come before a switch off by default, a variable unset)."""

    def key(origin: Origin) -> tuple[bool, bool]:
        c = origin.constraint
        return not reading.alone(origin), satisfies(c.op, c.values, origin.default) is True

    return sorted(origins, key=key)


def cause_flag(reading: Reading) -> Iterable[Finding]:
    """**cause-flag**: a flag (a setting of an options class) that the path
    condition reads, with the constraint that makes it true
    (``--moe-runner-backend`` ``==`` ``marlin``; ``--disable-radix-cache``
    ``false``). Flags of the site's own guards come before those of earlier
    checks it gets past, and flags the user changed from their default
    before those whose default already meets the constraint. Of settings
    that are alternatives for one value (:meth:`Reading.alternative`), only
    the first is a cause. Evidence: the guard that reads it and the option's
    definition."""
    kept: list[Origin] = []
    for origin in _by_default_last(reading, reading.causing(OriginKind.FLAG)):
        if not any(reading.alternative(k, origin) for k in kept):  # alternatives: the first
            kept.append(origin)
            yield _cause(reading, origin, "cause-flag")


def cause_env(reading: Reading) -> Iterable[Finding]:
    """**cause-env**: an environment variable the path condition reads, with
    its constraint (``SGLANG_X`` ``true``, ``set``, ``== v``). Evidence: the
    guard and the variable's registry entry or first read."""
    for origin in _by_default_last(reading, reading.causing(OriginKind.ENV)):
        yield _cause(reading, origin, "cause-env")


def cause_model(reading: Reading) -> Iterable[Finding]:
    """**cause-model**: a field of the model's configuration (``config.json``,
    ``hf_config``, the quantization config) or of its checkpoint that the path
    condition reads, with its constraint (``architectures`` ``in`` {...})."""
    for origin in reading.causing(OriginKind.MODEL_CONFIG, OriginKind.CHECKPOINT):
        yield _cause(reading, origin, "cause-model")


def cause_request(reading: Reading) -> Iterable[Finding]:
    """**cause-request**: a field of the API request or of its sampling
    parameters that the path condition reads, with its constraint
    (``max_tokens`` ``>`` ...)."""
    for origin in reading.causing(OriginKind.REQUEST):
        yield _cause(reading, origin, "cause-request")


def cause_hardware(reading: Reading) -> Iterable[Finding]:
    """**cause-hardware**: the device probe the path condition reads
    (``is_cuda``, the device capability or count) with its constraint."""
    for origin in reading.causing(OriginKind.HARDWARE):
        yield _cause(reading, origin, "cause-hardware")


def cause_package(reading: Reading) -> Iterable[Finding]:
    """**cause-package**: an installed distribution the path condition
    depends on: an import that failed (``missing``), an availability probe
    that is false, a version compared with a bound. ``owner`` is the
    distribution to install."""
    for origin in reading.causing(OriginKind.PACKAGE):
        yield _cause(reading, origin, "cause-package")
