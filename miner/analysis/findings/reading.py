"""What the findings rules read about one error: :class:`Reading`.

Built once per error by :func:`miner.analysis.findings.reading_of` from the
error, its origins (:mod:`miner.analysis.origins`), its audience and the
commit's facts (:class:`miner.analysis.facts.RepoFacts`). Rules only read it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from miner.analysis.audience import decisive
from miner.analysis.config import ConfigModel, Option
from miner.analysis.facts import RepoFacts
from miner.model import USER_ORIGINS, Caught, Condition, Error, Origin, OriginKind, Unreachable

USER = tuple(USER_ORIGINS)
#: Constraints that only say a value is there.
_PRESENCE = ("is not None", "set")


@dataclass(frozen=True)
class Reading:
    """One error and everything its rules read (no I/O: all in memory)."""

    error: Error
    origins: tuple[Origin, ...]
    """The primary site's origins, condition first (:attr:`Analysis.origins`)."""
    audience: str
    """The audience value (``user-setting``...)."""
    facts: RepoFacts
    logged: Caught | None = None
    unreachable: Unreachable | None = None
    condition: Condition | None = None
    """The primary site's reach condition (:attr:`Analysis.condition`), None
    when not computed."""

    @property
    def config(self) -> ConfigModel:
        return self.facts.config

    def narrowed(self, *kinds: OriginKind) -> tuple[Origin, ...]:
        """The origins read by the site's own path condition whose kind is
        one of ``kinds`` and whose constraint is narrowed (not ``any``),
        each (kind, name) once, first first."""
        seen: set[tuple[OriginKind, str]] = set()
        out = []
        for origin in self.origins:
            key = (origin.kind, origin.name)
            if origin.role != "condition" or origin.kind not in kinds or key in seen:
                continue
            if origin.constraint.op == "any":
                continue
            seen.add(key)
            out.append(origin)
        return tuple(out)

    def causing(self, *kinds: OriginKind) -> tuple[Origin, ...]:
        """The origins of ``kinds`` that make the site raise, for the cause
        rules: those of the guards that decide it
        (:func:`~miner.analysis.audience.decisive`: the innermost guard's
        when it reads a user-controlled value or runtime state; an outer
        flag only leads there), each (kind, name) once with its most
        specific constraint. A presence (``is not None``, ``set``) is no
        cause when the decisive guards also read the value as an operand
        (``input_ids is not None and len(input_ids) == 0``: a request that
        gives ``input_ids`` is no mistake; what it holds is)."""
        found: dict[tuple[OriginKind, str], list[Origin]] = {}
        for origin in decisive(self.error.primary, self.origins):
            if origin.role == "condition" and origin.kind in kinds:
                found.setdefault((origin.kind, origin.name), []).append(origin)
        out = []
        for group in found.values():
            ops = [o.constraint.op for o in group]
            specific = [o for o in group if o.constraint.op not in ("any", *_PRESENCE)]
            present = [o for o in group if o.constraint.op in _PRESENCE]
            if specific:
                out.append(specific[0])
            elif present and "any" not in ops:
                out.append(present[0])
        return tuple(out)

    def option(self, origin: Origin) -> Option | None:
        """The option a ``flag`` origin names: by its flag (or field name), of
        the options class and file the origin records (``defined``)."""
        path = origin.defined.rsplit(":", 1)[0] if origin.defined else None
        for opt in self.config.options:
            named = origin.name in opt.flags or (not opt.flags and origin.name == opt.name)
            if named and opt.owner == origin.owner and (path is None or opt.path == path):
                return opt
        return None

    def tested(self) -> dict[str, bool | None]:
        """The last names of the expressions the path condition reads that
        are not flags (``is_hybrid_ssm`` of ``ctx.is_hybrid_ssm``), and of
        the functions they are assigned from anywhere in the commit
        (``uses_ssm_state``), each with the truth the condition needs of it
        (None when the constraint is not a truth value)."""
        out: dict[str, bool | None] = {}
        for origin in self.origins:
            if origin.role != "condition" or origin.kind is OriginKind.FLAG:
                continue
            op = origin.constraint.op
            truth = True if op == "true" else False if op == "false" else None
            name = re.sub(r"\(.*", "", origin.read).rsplit(".", 1)[-1].strip()
            if not name.isidentifier():
                continue
            out.setdefault(name, truth)
            for assigned in self.facts.assigned.get(name, ()):
                value = re.sub(r"\(.*", "", assigned.value).rsplit(".", 1)[-1]
                out.setdefault(value, truth)
        return out

    def alone(self, origin: Origin) -> bool:
        """Whether changing ``origin`` alone can make the site unreachable:
        it has no :meth:`alternative` (either may decide it); it is read by
        an enclosing guard of the site or by an
        early exit that returns, not by an earlier check that raises and
        that the path gets past (flipping that one raises there instead:
        ``--moe-runner-backend hpc_ops`` at ``runner.py:70``); and its test
        is no alternative of an ``or`` conjunct of the condition (negating
        one alternative leaves the others)."""
        site = self.error.primary
        if any(self.alternative(o, origin) for o in self.narrowed(*USER)):
            return False  # one expression, several settings with one test: either decides it
        first = origin.chain[0].line if origin.chain else 0
        passed = {
            g.line
            for g in site.exits
            if g.kind == "asserted" or g.kind.startswith("exit") and self._raises(site.path, g.line)
        }
        if first in passed - {g.line for g in site.guards}:
            return False
        if self.condition is None:
            return True
        read = " ".join(origin.read.split())
        return not any(
            c.op == "or" and read in " ".join(c.text().split()) for c in self.condition.conjuncts()
        )

    def _raises(self, path: str, line: int) -> bool:
        """Whether the exit at ``path:line`` leaves by a ``raise`` (or is
        not known: then it may)."""
        branch = self.facts.exits.get((path, line))
        return branch is None or branch.kind in ("raise", "")

    @staticmethod
    def alternative(one: Origin, other: Origin) -> bool:
        """Whether ``one`` and ``other`` are alternatives for one value: the
        same expression traced to two settings with the same test
        (``get_moe_a2a_backend()`` is ``--moe-a2a-backend`` or
        ``--speculative-moe-a2a-backend``, each ``== deepep_v2``), not the
        conjuncts of a derived setting (``enable_mamba_extra_buffer``: one
        flag false and another in some values)."""
        return (
            one.read == other.read and one.name != other.name and one.constraint == other.constraint
        )
