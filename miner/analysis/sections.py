"""The card's prose sections, written by rules from the mined facts (deterministic).

Every sentence names only what was mined from the same commit: the guards as
written, settings of the configuration model with their real flags, choices
and defaults, environment variables the code reads, docstrings, and callers.
A setting that does not exist at the commit can never appear, because every
flag and variable named here comes from :class:`~miner.analysis.config.ConfigModel`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from miner.analysis.callers import target_name
from miner.analysis.config import Condition, ConfigModel, Option
from miner.analysis.exceptions import meaning, short
from miner.analysis.facts import RepoFacts
from miner.analysis.links import Clause, GuardLink, Read, linked_reads
from miner.analysis.trigger import guard_clause
from miner.model import Error, ExampleFix, Site

#: A flag named in prose (docstrings are quoted only when each one exists).
_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
_NO = Option("", (), "", "", 0, "argparse")

#: Most callers listed per level in "Common situations".
MAX_CALLERS = 4


def code(text: str) -> str:
    """Inline code that survives backticks in ``text``."""
    if "`" not in text:
        return f"`{text}`"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def shown(default: str | None) -> str:
    """A default as users type it: ``'auto'`` -> ``auto``; other text as it is."""
    if default is None:
        return "None"
    if len(default) >= 2 and default[0] == default[-1] and default[0] in "'\"":
        return default[1:-1]
    return default


def values_list(values: tuple[str, ...] | list[str], joiner: str = "or") -> str:
    items = [code(v) for v in values]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {joiner} " + items[-1]


_COMPARISON = re.compile(r" (?:is|in|not in|is not) |==|!=|<|>")


def _truth(cond: Condition, holds: bool) -> str:
    """An unlinked check in words: ```x` is true`` / ```a == b` holds``."""
    text = cond.name if cond.op in ("truthy", "falsy") else (cond.text or cond.name)
    if cond.op not in ("truthy", "falsy"):
        return f"{code(text)} {'holds' if holds else 'does not hold'}"
    if _COMPARISON.search(text):
        return f"{code(text)} {'holds' if holds else 'does not hold'}"
    return f"{code(text)} is {'true' if holds else 'false'}"


def _run(module: str | None, path: str) -> str:
    """``python -m module`` when the module path is importable, else ``python path``."""
    if module and all(part.isidentifier() for part in module.split(".")):
        return f"python -m {module}"
    return f"python {path}" if path else "python your_program.py"


@dataclass(frozen=True, slots=True)
class Fix:
    """One way out, with the example it leads to."""

    text: str
    example: ExampleFix | None = None


class Writer:
    """Writes the sections of a card for one error of one commit."""

    def __init__(self, facts: RepoFacts, short_sha: str) -> None:
        self.facts = facts
        self.config: ConfigModel = facts.config
        self.short_sha = short_sha
        self.flags = self.config.flag_names()

    # ------------------------------------------------------------ settings in words

    def option_ref(self, opt: Option) -> str:
        if opt.flag:
            return f"the flag {code(opt.flag)}"
        return f"the setting {code(opt.owner + '.' + opt.name)} (no command-line flag)"

    def option_state(self, opt: Option, cond: Condition) -> str:
        """``--x`` is ``v`` and the like (what makes the error happen)."""
        ref = code(opt.flag) if opt.flag else code(f"{opt.owner}.{opt.name}")
        choices = opt.choices or ()
        op, values = cond.op, cond.values
        if op == "truthy":
            return f"{ref} is on" if opt.is_bool else f"{ref} is set (a non-empty value)"
        if op == "falsy":
            return f"{ref} is off (not given)" if opt.is_bool else f"{ref} is unset or empty"
        if op in ("==", "in"):
            text = (
                f"{ref} is {values_list(values)}"
                if len(values) == 1
                else (f"{ref} is one of {values_list(values)}")
            )
            bad = [v for v in values if choices and v not in choices]
            if bad:
                text += f" (not among its choices {values_list(choices)})"
            return text
        if op in ("!=", "not in"):
            others = [c for c in choices if c not in values]
            text = f"{ref} is not {values_list(values)}"
            if others:
                text += f" (so it is {values_list(others)})"
            return text
        if op == "is None":
            if opt.default in ("None", None):
                return f"{ref} is not given (its default is `None`)"
            return f"{ref} is `None`"
        if op == "is not None":
            return f"{ref} is given"
        return f"{code(cond.text)} holds"

    def env_state(self, name: str, cond: Condition) -> str:
        var = self.config.env_var(name)
        default = (
            f" (default {code(shown(var.default))})"
            if var and var.default not in (None, "")
            else ""
        )
        ref = f"the environment variable {code(name)}"
        op = cond.op
        if op == "truthy":
            if var is not None and var.kind == "bool":
                return f"{ref} is set to a true value{default}"
            return f"{ref} is set to a non-empty value{default}"
        if op == "falsy":
            return f"{ref} is unset or false{default}"
        if op in ("==", "in"):
            return f"{ref} is {values_list(cond.values)}"
        if op in ("!=", "not in"):
            return f"{ref} is not {values_list(cond.values)}{default}"
        if op == "is None":
            return f"{ref} is not set"
        if op == "is not None":
            return f"{ref} is set"
        return f"{code(cond.text)} holds ({ref})"

    def expanded(self, read: Read, cond: Condition) -> tuple[list[Condition], str] | None:
        """A derived read's conditions over settings (negated when the guard
        needs it false), with ``all`` / ``any``."""
        derived = (
            self.facts.predicates.get(read.target)
            if read.exact and read.target in (self.facts.predicates)
            else self.config.derived_setting(read.target)
        )
        if derived is None:
            derived = self.facts.predicates.get(read.target)
        if derived is None or cond.op not in ("truthy", "falsy"):
            return None
        conds = list(derived.conditions)
        mode = derived.mode
        if cond.op == "falsy":
            conds = [c.negated() for c in conds]
            mode = "any" if mode == "all" else "all"
        return conds, mode

    def setting_state(self, name: str, cond: Condition) -> str:
        opt = self.config.option(name)
        if opt is None:
            return f"{code(cond.text)} holds"
        return self.option_state(opt, cond)

    def clause_text(self, clause: Clause) -> str:
        cond, read = clause.condition, clause.read
        if read is None:
            return _truth(cond, cond.op == "truthy")
        if read.kind == "env":
            return self.env_state(read.target, cond)
        if read.kind == "option":
            opt = self.config.option(read.target)
            assert opt is not None
            state = self.option_state(opt, cond)
            if read.exact:
                return state
            return (
                f"{code(read.text)} (which carries the name of {self.option_ref(opt)}) "
                f"says: {state}"
            )
        found = self.expanded(read, cond)
        truth = "true" if cond.op == "truthy" else "false"
        if found is None:
            return f"{code(read.text)} is {truth}"
        conds, mode = found
        joiner = " and " if mode == "all" else " or "
        inner = joiner.join(self.setting_state(c.name, c) for c in conds)
        derived = self.config.derived_setting(read.target) or self.facts.predicates.get(read.target)
        label = (
            f"{code(derived.owner + '.' + derived.name + '()')}"
            if derived is not None and derived.owner
            else code(read.target + "()")
        )
        if read.exact:
            return (
                f"{code(read.text)} is {truth}: the derived setting {label} is {truth} when {inner}"
            )
        return (
            f"{code(read.text)} is {truth}; it carries the name of the derived setting {label}, "
            f"which is {truth} when {inner}"
        )

    def guard_text(self, link: GuardLink) -> str:
        if not link.clauses:
            return guard_clause(link.guard) or link.guard.describe()
        parts = [self.clause_text(c) for c in link.clauses]
        if len(parts) == 1:
            return parts[0]
        word = "all of" if link.mode == "all" else "any of"
        return f"{word}: " + "; ".join(parts)

    # ------------------------------------------------------------ sections

    def scope_text(self, site: Site) -> str:
        where = (
            "while the module is imported" if site.scope == "<module>" else f"in {code(site.scope)}"
        )
        docs = []
        known = self.flags
        quote = [
            d
            for d in (site.class_doc, site.function_doc)
            if d and all(f in known for f in _FLAG.findall(d))
        ]
        if site.class_doc and site.class_doc in quote:
            cls = site.scope.split(".")[0]
            docs.append(f'{code(cls)}: "{site.class_doc}"')
        if site.function_doc and site.function_doc in quote:
            docs.append(f'{code(site.scope.split(".")[-1])}: "{site.function_doc}"')
        return where + (f" ({'; '.join(docs)})" if docs else "")

    def trigger(self, site: Site, links: tuple[GuardLink, ...]) -> str:
        lines = [f"Raised at `{site.path}:{site.line}` {self.scope_text(site)}"]
        steps = [
            f"- {self.guard_text(link)} (line {link.guard.line})"
            for link in links
            if link.clauses or guard_clause(link.guard)
        ]
        if steps:
            lines[0] += ", when:"
            lines.append("")
            lines.extend(steps)
        else:
            lines[0] += ", every time this line is reached: no condition guards it."
        if not any(link.linked for link in links):
            checks = [c.condition.text or c.condition.name for link in links for c in link.clauses]
            lines.append("")
            if checks:
                lines.append(
                    "No flag or environment variable is involved: the code checks "
                    + ", ".join(code(c) for c in checks)
                    + "; these depend on the inputs, the model or the state at run time."
                )
            else:
                lines.append(
                    "No flag or environment variable is involved: reaching this line "
                    f"(calling {code(site.scope)}) is what raises it."
                )
        return "\n".join(lines)

    def settings_summary(self, links: tuple[GuardLink, ...]) -> str | None:
        parts = [self.clause_text(c) for link in links for c in link.clauses if c.read]
        return "; ".join(parts) if parts else None

    def what_it_means(self, error: Error, links: tuple[GuardLink, ...]) -> str:
        site = error.primary
        kind, doc = meaning(error.exception, dict(self.facts.exceptions))
        name = short(error.exception) or "re-raise"
        text = f"`{name}`: {kind}."
        if doc:
            text += f' Its docstring: "{doc}".'
        summary = self.settings_summary(links)
        if summary:
            text += f" Here it is raised {self.scope_text(site)} because {summary}."
        else:
            checks = [c for link in links for c in link.clauses]
            if checks:
                what = " and ".join(self.clause_text(c) for c in checks[:3])
                text += f" Here it is raised {self.scope_text(site)} when {what}."
            else:
                text += f" Here it is raised whenever {self.scope_text(site)} reaches this line."
        return text

    def situations(self, site: Site, links: tuple[GuardLink, ...]) -> tuple[str, ...]:
        out: list[str] = []
        name = target_name(site.scope)
        if site.scope == "<module>":
            out.append(
                f"Importing the module `{site.path}` (directly or through a package import)."
            )
        elif name is not None:
            callers = self.facts.callers.get(name)
            defs = self.facts.definitions.get(name, 0)
            if callers:
                grouped: dict[tuple[str, str], list[int]] = {}
                for caller in callers:
                    grouped.setdefault((caller.scope, caller.path), []).append(caller.line)
                for (scope, path), numbers in list(grouped.items())[:MAX_CALLERS]:
                    where = ", ".join(f"`{path}:{n}`" for n in numbers[:3])
                    line = f"{code(scope)} calls {code(name)} at {where}"
                    parent = target_name(scope)
                    above = self.facts.callers.get(parent, ()) if parent else ()
                    if above:
                        up = ", ".join(f"{code(c.scope)} (`{c.path}:{c.line}`)" for c in above[:2])
                        line += f", reached from {up}"
                    out.append(line + ".")
                if len(grouped) > MAX_CALLERS:
                    more = len(grouped) - MAX_CALLERS
                    out.append(f"{more} more functions call {code(name)} in the commit.")
            elif name in self.facts.crowded:
                out.append(
                    f"{code(name)} is called from {self.facts.crowded[name]} files of the commit: "
                    "a shared helper reached from many paths."
                )
            elif defs > 1:
                out.append(
                    f"{code(name)} is defined {defs} times in the commit, so its callers are "
                    "not resolved by name; the traceback shows which one ran."
                )
            elif name.startswith("test_") or "/test" in f"/{site.path}":
                out.append(
                    f"Running the test suite: {code(name)} is a test (or test helper) in "
                    f"`{site.path}`, run by the test runner rather than called by name."
                )
            else:
                out.append(
                    f"No call of {code(name)} by name was found in the commit: it is reached "
                    "through a registry, a callback, an override or from users' code."
                )
        flags = []
        for clause, read in linked_reads(links):
            if read.kind == "env":
                flags.append(self.env_state(read.target, clause.condition))
            elif read.kind == "option":
                opt = self.config.option(read.target)
                if opt is not None:
                    flags.append(self.option_state(opt, clause.condition))
            else:
                found = self.expanded(read, clause.condition)
                if found:
                    joiner = " and " if found[1] == "all" else " or "
                    flags.append(joiner.join(self.setting_state(c.name, c) for c in found[0]))
        if flags:
            out.append("Launches where " + "; ".join(dict.fromkeys(flags)) + ".")
        if not out:
            out.append(f"Any run that reaches {code(site.scope)} in `{site.path}`.")
        return tuple(out)

    # ------------------------------------------------------------ solutions

    def entry(self, opt: Option | None) -> str:
        """The command line that parses ``opt`` (the primary entry point by default)."""
        if opt is not None and (opt.owner != self.config.primary or not self.config.entry_point):
            return _run(opt.module, opt.path)
        if self.config.entry_point:
            return _run(self.config.entry_point, "")
        return "python your_program.py"

    def option_fix(self, opt: Option, cond: Condition, prefix: str = "") -> Fix | None:
        """How to make ``cond`` (what the error needs) false for ``opt``; a
        ``prefix`` (for a link by name only) leads the sentence."""
        fix = self._option_fix(opt, cond)
        if fix is None or not prefix:
            return fix
        return Fix(prefix + fix.text[0].lower() + fix.text[1:], fix.example)

    def _option_fix(self, opt: Option, cond: Condition) -> Fix | None:
        choices = list(opt.choices or ())
        values = list(cond.values)
        cmd = self.entry(opt)
        flag = opt.flag
        aliases = self.config.aliases_of(opt.name)
        alias_note = (
            f" (the deprecated alias {values_list(aliases)} sets the same value)" if aliases else ""
        )
        if flag is None:
            return self._field_fix(opt, cond)
        if cond.op in ("==", "in"):
            others = [c for c in choices if c not in values]
            default = (opt.default or "").strip("'\"")
            parts = []
            if others:
                parts.append(f"set {code(flag)} to another of its choices: {values_list(others)}")
            if opt.default is not None and default not in values:
                parts.append(f"drop {code(flag)} to use its default {code(shown(opt.default))}")
            if not parts:
                return None
            joined = "; or ".join(parts)
            text = joined[0].upper() + joined[1:] + alias_note + "."
            before = f"{cmd} ... {flag} {values[0]}"
            if others:
                pick = next((o for o in others if o != "auto"), others[0])
                after = f"{cmd} ... {flag} {pick}"
            else:
                after = f"{cmd} ..."
            return Fix(text, ExampleFix("shell", before, after))
        if cond.op in ("!=", "not in"):
            wanted = values if not choices else [v for v in values if v in choices]
            if not wanted:
                return None
            text = f"Set {code(flag)} to {values_list(wanted)}{alias_note}."
            return Fix(text, ExampleFix("shell", f"{cmd} ...", f"{cmd} ... {flag} {wanted[0]}"))
        if cond.op == "truthy":
            if opt.is_bool:
                text = f"Drop {code(flag)} (it is off by default){alias_note}."
                return Fix(text, ExampleFix("shell", f"{cmd} ... {flag}", f"{cmd} ..."))
            text = f"Leave {code(flag)} unset (default {code(shown(opt.default))})."
            return Fix(text, ExampleFix("shell", f"{cmd} ... {flag} VALUE", f"{cmd} ..."))
        if cond.op == "falsy":
            if opt.is_bool:
                text = f"Pass {code(flag)}{alias_note}."
                return Fix(text, ExampleFix("shell", f"{cmd} ...", f"{cmd} ... {flag}"))
        if cond.op in ("falsy", "is None"):
            if choices:
                text = f"Pass {code(flag)} with one of its choices: {values_list(choices)}."
                after = f"{cmd} ... {flag} {choices[0]}"
                return Fix(text, ExampleFix("shell", f"{cmd} ...", after))
            return Fix(f"Pass {code(flag)} with a (non-empty) value.", None)
        if cond.op == "is not None":
            text = f"Drop {code(flag)} (its default is {code(shown(opt.default))})."
            return Fix(text, ExampleFix("shell", f"{cmd} ... {flag} VALUE", f"{cmd} ..."))
        return None

    def _field_fix(self, opt: Option, cond: Condition) -> Fix | None:
        call = f"{opt.owner}(..., {opt.name}="
        if cond.op in ("truthy", "falsy"):
            bad, good = ("True", "False") if cond.op == "truthy" else ("False", "True")
            text = f"Construct {code(opt.owner)} with {code(f'{opt.name}={good}')}."
            return Fix(text, ExampleFix("python", f"{call}{bad})", f"{call}{good})"))
        if cond.op in ("==", "in") and cond.values:
            others = [c for c in (opt.choices or ()) if c not in cond.values]
            if others:
                text = (
                    f"Construct {code(opt.owner)} with {code(opt.name)} "
                    f"set to {values_list(others)}."
                )
                return Fix(
                    text,
                    ExampleFix("python", f"{call}{cond.values[0]!r})", f"{call}{others[0]!r})"),
                )
        return None

    def env_fix(self, name: str, cond: Condition) -> Fix:
        var = self.config.env_var(name)
        cmd = self.entry(None)
        default = (
            f" (default {code(shown(var.default))})"
            if var and var.default not in (None, "")
            else ""
        )
        if cond.op == "truthy" and not (var is not None and var.kind == "bool"):
            text = f"Unset {code(name)} (or set it to an empty value){default}."
            return Fix(text, ExampleFix("shell", f"{name}=1 {cmd} ...", f"unset {name}\n{cmd} ..."))
        if cond.op == "truthy":
            text = f"Unset {code(name)} or set it to a false value (`{name}=0`){default}."
            return Fix(text, ExampleFix("shell", f"{name}=1 {cmd} ...", f"{name}=0 {cmd} ..."))
        if cond.op == "falsy":
            text = f"Set {code(name)} to a true value (`{name}=1`){default}."
            return Fix(text, ExampleFix("shell", f"{cmd} ...", f"{name}=1 {cmd} ..."))
        if cond.op in ("==", "in") and cond.values:
            text = (
                f"Set {code(name)} to another value than {values_list(cond.values)}, "
                f"or unset it{default}."
            )
            return Fix(
                text, ExampleFix("shell", f"{name}={cond.values[0]} {cmd} ...", f"{cmd} ...")
            )
        if cond.op in ("!=", "not in") and cond.values:
            text = f"Set {code(name)} to {values_list(cond.values)}."
            return Fix(
                text, ExampleFix("shell", f"{cmd} ...", f"{name}={cond.values[0]} {cmd} ...")
            )
        if cond.op == "is not None":
            return Fix(
                f"Unset {code(name)}{default}.",
                ExampleFix("shell", f"{name}=... {cmd} ...", f"unset {name}\n{cmd} ..."),
            )
        if cond.op == "is None":
            return Fix(
                f"Set {code(name)}.", ExampleFix("shell", f"{cmd} ...", f"{name}=... {cmd} ...")
            )
        return Fix(f"Change {code(name)} so that {code(cond.text)} no longer holds{default}.")

    def clause_fixes(self, clause: Clause) -> list[Fix]:
        read, cond = clause.read, clause.condition
        if read is None:
            return []
        if read.kind == "env":
            return [self.env_fix(read.target, cond)]
        prefix = "" if read.exact else f"If {code(read.text)} holds the command-line value: "
        if read.kind == "option":
            opt = self.config.option(read.target)
            fix = self.option_fix(opt, cond, prefix) if opt else None
            return [fix] if fix else []
        found = self.expanded(read, cond)
        if found is None:
            return []
        conds, mode = found
        fixes = []
        # a choice to switch first, then switches to flip
        conds = sorted(conds, key=lambda c: not (self.config.option(c.name) or _NO).choices)
        for c in conds:
            opt = self.config.option(c.name)
            if opt is None:
                continue
            fix = self.option_fix(opt, c, prefix)
            if fix:
                fixes.append(fix)
        if mode == "any" and len(fixes) > 1:
            joined = " and ".join(f.text.rstrip(".") for f in fixes)
            return [Fix(f"All of these (any one of them raises it): {joined}.", fixes[0].example)]
        return fixes

    def solutions(self, error: Error, links: tuple[GuardLink, ...]) -> tuple[list[str], ExampleFix]:
        site = error.primary
        fixes: list[Fix] = []
        for link in links:
            for clause in link.clauses:
                fixes.extend(self.clause_fixes(clause))
        texts = list(dict.fromkeys(f.text for f in fixes))
        example = next((f.example for f in fixes if f.example is not None), None)
        name = short(error.exception)
        unlinked = [c for link in links for c in link.clauses if c.read is None]
        if name in ("ImportError", "ModuleNotFoundError"):
            match = re.search(r"pip install [^\s`'\"]+(?: [^\s`'\"]+)*", error.message or "")
            hint = f" (the message says {code(match.group(0))})" if match else ""
            texts.append(f"Install the missing package{hint} in the same environment.")
        for clause in unlinked[:3]:
            texts.append(
                f"Make sure {self.negated_text(clause)} when {code(site.scope)} runs: "
                "check the model, inputs or state that feed this check."
            )
        parts = [p.expr for p in error.message_parts if p.expr]
        if parts:
            texts.append(
                "Read the values the message reports ("
                + ", ".join(code(p) for p in parts[:4])
                + ") to see which input is off."
            )
        if name == "AssertionError":
            texts.append(
                "If your settings and inputs are valid, report it as a bug with the message "
                f"and the traceback (an internal check of {code(site.scope)} failed)."
            )
        if name == "NotImplementedError" and not fixes:
            texts.append(
                f"Use a configuration that does not reach {code(site.scope)}; this path "
                "does not implement the combination at this commit."
            )
        if not texts:
            texts.append(
                f"Avoid calling {code(site.scope)} in this state: the raise at "
                f"`{site.path}:{site.line}` is unconditional."
            )
        if example is None:
            example = self.code_example(site, unlinked)
        return texts, example

    def negated_text(self, clause: Clause) -> str:
        return _truth(clause.condition, clause.condition.op == "falsy")

    def code_example(self, site: Site, unlinked: list[Clause]) -> ExampleFix:
        scope = site.scope
        if unlinked:
            test = unlinked[0].condition
            expr = test.text or test.name
            holds = f"not ({expr})" if test.op == "falsy" else expr
            before = (
                f"# reaches the raise at {site.path}:{site.line}\n# because this holds:\n{holds}"
            )
            after = (
                f"# check the input first, so that {scope} sees:\nnot ({holds})"
                if not holds.startswith("not (")
                else f"# check the input first, so that {scope} sees:\n{holds[5:-1]}"
            )
            return ExampleFix("python", before, after)
        return ExampleFix(
            "python",
            f"# any call that reaches {scope} raises at {site.path}:{site.line}",
            f"# take another code path than {scope} (this line raises unconditionally)",
        )
