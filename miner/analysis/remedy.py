"""What the message itself tells the user to do, turned into solutions with real names.

:func:`remedies` reads the literal words of an error message (placeholders as
``{}``) and returns the advice it gives, each as a :class:`Remedy`: a sentence
for the card's "Solutions" and, where the advice is one setting change, a
command line for the "Example fix". Flags and environment variables are named
only when the configuration model has them; packages only as the message
spells them (``pip install x``).

Recognized, case-insensitively, per sentence of the message:

* requirements on a flag: ``--x must be ...``, ``--x is required``,
  ``... requires --x[=v]`` (and ``requires X=v`` for a variable);
* conflicts: two flags that are "mutually exclusive", "not compatible",
  "incompatible", "cannot be used/combined with";
* advice: a clause starting with "use", "pass", "set", "add", "remove", "drop",
  "increase", "decrease", "reduce", "enable", "disable", "specify", "install",
  "upgrade", "export", "unset", "switch to", "try", "consider", "please",
  "run with", "launch with" (quoted as the message says it);
* ``pip install ...`` commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from miner.analysis.audience import named_env_vars
from miner.analysis.config import ConfigModel, Option
from miner.analysis.evidence import sentence_ends
from miner.analysis.wording import code, shown, values_list
from miner.model import ExampleFix, FixKind

_FLAG = r"--[A-Za-z][\w-]*[A-Za-z0-9]"
_FLAG_RE = re.compile(rf"(?<![\w-]){_FLAG}")
#: A value as a message writes it, with ``<placeholders>`` in it kept whole
#: (``tcp://<node0-ip>:<port>``: cut at ``<``, it would read ``tcp://``).
_VALUE = r"(?:[\w.:/+-]|<[\w.-]+>)+"
_FLAG_VALUE = re.compile(rf"(?<![\w-])({_FLAG})(=| )({_VALUE})")
_ENV_VALUE = re.compile(rf"(?<![\w])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=({_VALUE})")
_ADVICE = re.compile(
    r"(?:^|(?<=[.,;:(])\s*|(?<=[.,;:(] )|\b(?:please|try to|try|consider|instead,?|either|"
    r"or you can|you can|you may|you should|you need to|you must|or)\s+)"
    r"(?:use|pass|set|add|remove|drop|increase|decrease|reduce|lower|raise|enable|disable|"
    r"specify|install|upgrade|downgrade|export|unset|switch to|run with|launch with|"
    r"re-?run with|point|provide|choose|select|turn off|turn on|restart with|check|verify|"
    r"ensure|make sure|reinstall|update)\b[^.;!?]*",
    re.I,
)
_PIP = re.compile(
    r"\b(?:pip3?|uv pip) install\s+[^\s'\"`,;)]+"
    r"(?:\s+(?!(?:and|or|to|then|for|with|in|if|first|before|after|from|the|a|an|instead|"
    r"again|it|them|on|of|is|are|be|as|via|using|so|but)\b)[^\s'\"`,;)]+)*"
)
#: A ``pip install`` of a local file or folder (``dist/*.whl``, ``.``, ``-e .``):
#: one step of a build the message describes, not a fix by itself.
_LOCAL_TARGET = re.compile(r"\s(?:-e\s+)?(?:\.{1,2}(?:/|\s|$)|[\w.-]*/(?!/)|\S*\*|\S+\.whl\b)")
_CONFLICT = re.compile(
    r"mutually exclusive|not compatible|incompatible|cannot be (?:used|combined|enabled)"
    r"(?: together)?(?: with)?|can(?:no|')t be (?:used|combined) (?:together|with)|"
    r"conflicts? with|only one of",
    re.I,
)
_MUST = re.compile(
    rf"({_FLAG})\s+(?:value\s+)?(must|should)\s+(not\s+)?(be|have|contain|match|point to|"
    r"divide|equal)\s+((?:[^.;!?]|\.(?=\S))*)",
    re.I,
)
#: What follows "must be" when the message asks for the flag itself: "set
#: when --enable-prefill-cp is enabled" -> the rest after the word.
_GIVEN = re.compile(r"(?:set|given|specified|provided|passed|used)\b\s*(.*)$", re.I | re.S)
_REQUIRED = re.compile(rf"({_FLAG})\s+(?:is|are)\s+(?:required|mandatory|needed)", re.I)
_REQUIRES = re.compile(
    rf"\b(?:requires?|needs?|only supports?|supports only|must (?:use|set|pass))\s+"
    rf"(?:the\s+)?({_FLAG}|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:(=|\s)({_VALUE}))?",
    re.I,
)
_WORDS_AFTER = re.compile(r"^[a-z]", re.I)


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def flag_value(opt: Option, sep: str, token: str | None) -> str | None:
    """The value a message gives ``opt`` in ``--flag<sep><token>``, or None.

    ``--x=v`` always writes a value; ``--x v`` only when ``v`` can be one: one
    of the option's choices, a number, or a token with a digit, ``/``, ``_``,
    ``.`` or ``:`` inside. A plain word after the flag (``requires
    --disable-radix-cache because ...``) is the sentence going on, and a switch
    (``store_true``) takes no value (a custom action's switch takes ``true``
    or ``false``). Sentence punctuation at the end (``1.``)
    is not part of the value.
    """
    if not token:
        return None
    token = token.rstrip(".:")
    if not token:
        return None
    if opt.is_bool:
        # a ``store_true`` switch takes no value; a custom action's does
        # (SGLang's diffusion ``StoreBoolean``: ``--enable-svdquant false``), and
        # ``BooleanOptionalAction``'s ``false`` is its ``--no-x`` (:meth:`Option.given`)
        custom = opt.action is not None and not opt.action.endswith("store_true")
        return token if custom and token.lower() in ("true", "false") else None
    if opt.choices:
        return token if token in opt.choices else None
    if sep == "=" or _NUMBER.fullmatch(token):
        return token
    if sep.isspace() and any(c.isdigit() or c in "/_.:<" for c in token):
        return token
    return None


@dataclass(frozen=True, slots=True)
class Remedy:
    """One piece of advice from the message, with real names."""

    text: str
    """A sentence for "Solutions" (Markdown)."""
    example: ExampleFix | None = None
    names: tuple[str, ...] = ()
    """The flags and variables it names."""


def sentences(words: str) -> list[str]:
    """The message split into sentences (``{}`` kept): at line breaks, and
    where :func:`~miner.analysis.evidence.sentence_ends` ends one (not after
    ``e.g.`` nor inside parentheses)."""
    out = []
    for line in words.splitlines():
        line = " ".join(line.split())
        start = 0
        for end in [*sentence_ends(line), len(line)]:
            if line[start:end].strip():
                out.append(line[start:end].strip())
            start = end
    return out


def _marked(text: str, flags: Iterable[str], env: Iterable[str]) -> str:
    """``text`` with placeholders as ``…``, and as code spans the message's
    own backquoted spans (as written), known flags, variables and pip
    commands."""
    text = text.replace("{}", "…").strip().rstrip(".,;:")
    names = sorted({*flags, *env}, key=len, reverse=True)
    # (start, end, the code span's text): the message's own `...` spans first
    spans: list[tuple[int, int, str]] = [
        (m.start(), m.end(), m.group(1)) for m in re.finditer(r"`([^`\n]+)`", text)
    ]
    for m in _PIP.finditer(text):
        if not any(s <= m.start() < e for s, e, _ in spans):
            spans.append((m.start(), m.end(), m.group(0)))
    for name in names:
        # a flag with the value after it in one span (``--x tcp://<host>:1``),
        # when that value holds what only a value holds (a digit, ``/``, ``:``, ``<``)
        value = rf"(?:=(?:{_VALUE})| (?=[\w.:/+<>-]*[\d/:<])(?:{_VALUE}))?"
        for m in re.finditer(rf"(?<![\w-]){re.escape(name)}{value}(?![\w-])", text):
            # the value without the sentence's ``.`` / ``:`` ("--x value:" is no value)
            given = m.group(0)[len(name) + 1 :].rstrip(".:")
            joins = m.group(0)[len(name) : len(name) + 1] == "=" or re.search(r"[\d/:<]", given)
            end = m.start() + len(name)
            if given and re.search(r"\w", given) and joins:  # "--x / Y": no value either
                end += 1 + len(given)
            if not any(s <= m.start() < e for s, e, _ in spans):
                spans.append((m.start(), end, text[m.start() : end]))
    out, last = [], 0
    for start, end, shown_text in sorted(spans):
        if start < last:
            continue
        out.append(text[last:start].replace("`", "'"))
        out.append(code(shown_text))
        last = end
    out.append(text[last:].replace("`", "'"))
    return "".join(out).replace('"', "'")


def _shared(a: str, b: str | None) -> int:
    """How many leading folders the files ``a`` and ``b`` have in common
    (the same file: more than any); 0 without ``b``."""
    if b is None:
        return 0
    if a == b:
        return 1 << 16
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


#: The verb of "--x must <verb> ..." as the fix says it of a value.
_MUST_VERBS = {
    "be": "is",
    "have": "has",
    "contain": "contains",
    "match": "matches",
    "point to": "points to",
    "divide": "divides",
    "equal": "equals",
}


class Remedies:
    """Reads messages against one configuration model."""

    def __init__(
        self, config: ConfigModel, entry: str | Callable[[Option | None], str | None]
    ) -> None:
        """``entry``: the command line that parses an option (None: the
        primary entry point; None: not known), or one command line for all."""
        self.config = config
        self._entry = entry
        self.entry = self.command(None) or "python your_program.py"
        self.flags: dict[str, list[Option]] = {}
        """Flag -> every option spelled so (several parsers may define one flag)."""
        for o in sorted(config.options, key=lambda o: o.deprecated_for is not None):
            for f in o.flags:
                self.flags.setdefault(f, []).append(o)
        self.env = frozenset(e.name for e in config.env)

    def command(self, opt: Option | None) -> str | None:
        """The command line that parses ``opt`` (the primary entry point for
        None); None when it is not known."""
        return self._entry if isinstance(self._entry, str) else self._entry(opt)

    def option(self, flag: str, path: str | None = None) -> Option | None:
        """The option a message of the file ``path`` means by ``flag``.

        Several parsers may define one flag (``--port`` in the server's
        ``ServerArgs`` and in a dozen benchmark scripts): the options of the
        files nearest ``path`` (the most leading folders in common) are
        kept, and of those the primary arguments class's, else the only
        file's; None when files as near define it otherwise (``--model-type``
        of two tools, named by the CLI): which one the message means is not
        known. Aliases come last; without ``path``, every file is as near."""
        opts = self.flags.get(flag)
        if not opts:
            return None
        live = [o for o in opts if o.deprecated_for is None] or opts
        near = max(_shared(o.path, path) for o in live)
        top = [o for o in live if _shared(o.path, path) == near]
        if len({o.path for o in top}) == 1:
            return top[0]
        primary = [
            o for o in top if o.owner == self.config.primary and o.path == self.config.primary_path
        ]
        return primary[0] if primary else None

    def describe(self, opt: Option) -> str:
        """``takes `a`, `b` or `c`; default `a``` (empty when nothing is known)."""
        parts = []
        if opt.choices:
            parts.append(f"takes {values_list(opt.choices)}")
        if opt.default not in (None, "None", ""):
            parts.append(f"default {code(shown(opt.default))}")
        elif opt.is_bool:
            parts.append("off by default")
        return "; ".join(parts)

    def _set(
        self, flag: str, value: str | None, sep: str = "=", path: str | None = None
    ) -> tuple[str, ExampleFix | None] | None:
        """``Pass `--flag value``` and its example fix (None when the command
        that parses the flag is not known), or None when unsure.

        ``value`` is the token the message writes after the flag and ``sep`` what
        separates them (``=`` or a space); :func:`flag_value` decides whether that
        token is the flag's value or just the next word of the sentence.
        """
        opt = self.option(flag, path)
        if opt is None:
            return None
        value = flag_value(opt, sep, value)
        cmd = self.command(opt)
        if value is not None and opt.switch:
            # ``--x false`` of a switch is ``--no-x``, or the flag left out
            flag, value = opt.given(value) or "", None
            if not flag:
                return None
        if value is None and opt.is_bool:
            if cmd is None:
                return f"Pass {code(flag)}", None
            return f"Pass {code(flag)}", ExampleFix(
                "shell", f"{cmd} ...", f"{cmd} ... {flag}", FixKind.FLAG
            )
        if value is None:
            return None
        if cmd is None:
            return f"Pass {code(f'{flag} {value}')}", None
        return (
            f"Pass {code(f'{flag} {value}')}",
            ExampleFix("shell", f"{cmd} ...", f"{cmd} ... {flag} {value}", FixKind.FLAG),
        )

    def remedies(self, words: str, path: str | None = None) -> list[Remedy]:
        """The advice of a message's literal words (placeholders as ``{}``),
        raised in the file ``path`` (which option a flag means: :meth:`option`),
        sentence by sentence, each advice once."""
        out: dict[str, Remedy] = {}
        for part in sentences(words):
            flags = [f for f in _FLAG_RE.findall(part) if f in self.flags]
            unknown = [f for f in _FLAG_RE.findall(part) if f not in self.flags]
            env = named_env_vars(part, self.env)
            found = [
                *self._requires(part, path),
                *self._required(part, path),
                *self._musts(part, flags, env),
                *self._conflict(part, flags, unknown),
                *self._advised(part, flags, unknown, env, path),
                *self._installs(part),
            ]
            for remedy in found:
                out.setdefault(remedy.text, remedy)
        return list(out.values())

    def _requires(self, part: str, path: str | None) -> Iterator[Remedy]:
        """ "requires --x=v" / "requires X=v": set the flag or the variable."""
        for m in _REQUIRES.finditer(part):
            name, sep, value = m.group(1), m.group(2) or "", m.group(3)
            value = value.rstrip(".:") if value else value  # the sentence's end
            if name.startswith("--"):
                done = self._set(name, value, sep, path)
                if done is not None:
                    yield Remedy(f"{done[0]}: the message says it is required.", done[1], (name,))
            elif name in self.env and value and sep == "=":
                cmd = self.entry
                example = ExampleFix(
                    "shell", f"{cmd} ...", f"{name}={value} {cmd} ...", FixKind.ENV
                )
                text = f"Set {code(f'{name}={value}')}: the message says it is required."
                yield Remedy(text, example, (name,))

    def _required(self, part: str, path: str | None) -> Iterator[Remedy]:
        """ "--x is required": pass the flag."""
        for m in _REQUIRED.finditer(part):
            opt = self.option(m.group(1), path)
            if opt is not None:
                about = self.describe(opt)
                text = f"Pass {code(m.group(1))}: the message says it is required" + (
                    f" ({about})." if about else "."
                )
                yield Remedy(text, None, (m.group(1),))

    def _musts(self, part: str, flags: list[str], env: list[str]) -> Iterator[Remedy]:
        """ "--x must (not) be/have/... <rest>": give it such a value, or pass it."""
        for m in _MUST.finditer(part):
            flag = m.group(1)
            if flag not in self.flags:
                continue
            rest = _marked(m.group(5), flags, env)
            verb = _MUST_VERBS[m.group(4).lower()]
            if m.group(3):
                verb = {"is": "is not", "has": "does not have"}.get(verb, "does not " + verb)
            given = _GIVEN.match(rest) if verb in ("is", "is not") else None
            if given is not None:
                # "--x must be set when ...": pass it (or leave it out)
                do = "Leave out" if m.group(3) else "Pass"
                when = f" {given.group(1)}" if given.group(1) else ""
                yield Remedy(f"{do} {code(flag)}{when}, as the message asks.", None, (flag,))
            elif rest:
                text = f"Give {code(flag)} a value that {verb} {rest}, as the message asks."
                yield Remedy(text, None, (flag,))

    def _conflict(self, part: str, flags: list[str], unknown: list[str]) -> Iterator[Remedy]:
        """Two or more flags the message says cannot go together: leave one out."""
        if len(flags) >= 2 and _CONFLICT.search(part) and not unknown:
            yield Remedy(
                f"Leave out one of {values_list(flags)}: the message says they "
                "cannot be used together.",
                None,
                tuple(flags),
            )

    def _advised(
        self, part: str, flags: list[str], unknown: list[str], env: list[str], path: str | None
    ) -> Iterator[Remedy]:
        """An advice clause ("please set --x ...", "pip install ...") that
        names a flag, a variable or a ``pip`` command: do what it says."""
        for m in _ADVICE.finditer(part):
            clause = m.group(0).strip()
            if len(clause.split()) < 2 or unknown and any(u in clause for u in unknown):
                continue
            named = [f for f in flags if f in clause] + [v for v in env if v in clause]
            if not named and not _PIP.search(clause):
                continue
            text = _marked(clause, flags, env)
            example = self._advice_example(clause, named, path)
            yield Remedy(f'Do what the message advises: "{text}".', example, tuple(named))

    def _advice_example(self, clause: str, named: list[str], path: str | None) -> ExampleFix | None:
        """The command line of an advice that names one flag (with its value)
        or one variable set to a value; None otherwise."""
        if len(named) == 1 and named[0].startswith("--"):
            sep, value = next(
                (
                    (v.group(2), v.group(3))
                    for v in _FLAG_VALUE.finditer(clause)
                    if v.group(1) == named[0]
                ),
                ("", None),
            )
            done = self._set(named[0], value, sep, path)
            return done[1] if done else None
        if len(named) == 1:
            value_m = next((v for v in _ENV_VALUE.finditer(clause) if v.group(1) == named[0]), None)
            if value_m is not None:
                cmd = self.entry
                setting = value_m.group(0).rstrip(".:")
                return ExampleFix("shell", f"{cmd} ...", f"{setting} {cmd} ...", FixKind.ENV)
        return None

    def _installs(self, part: str) -> Iterator[Remedy]:
        """A ``pip install`` command of a package (not a local path)."""
        for m in _PIP.finditer(part):
            command = m.group(0).rstrip(".")
            if not _LOCAL_TARGET.search(command):
                yield Remedy(f"Install what is missing: {code(command)}.", None, ())


# --------------------------------------------------------------------------- requirement, reason

_ASKS_FOR = re.compile(
    r"\b(?:must|should|shall|has to|have to|needs? to|is required|are required|required|"
    r"requires?|expects?|expected|only|at least|at most|no more than|no less than|"
    r"divisible|multiple of|power of|equal|same|match(?:es)?|between)\b",
    re.I,
)
_REFUSES = re.compile(
    r"\b(?:not supported|unsupported|does not support|doesn't support|do not support|"
    r"cannot|can't|can not|not allowed|invalid|not (?:a )?valid|not found|does not exist|"
    r"doesn't exist|missing|mismatch|exceeds?|too (?:large|small|long|short|many|few|big)|"
    r"not implemented|incompatible|not compatible|unknown|unrecognized|out of range)\b",
    re.I,
)
_BECAUSE = re.compile(
    r"\b(?:because|since|due to|as it|as the|as this|so that)\b\s+.*?(?=\.(?:\s|$)|[;!?]|$)",
    re.I,
)
_LITERAL_WORD = re.compile(r"[A-Za-z]{3,}")


def _words_in(text: str) -> int:
    return len(_LITERAL_WORD.findall(text.replace("{}", " ")))


#: ``name={}`` (and ``name: {}``) in a message: a value shown, not words.
_SHOWN_VALUE = re.compile(r"[\w.\[\]'\"`-]+\s*[=:]\s*\{\}")
#: A clause that reports what was found rather than why.
_REPORTS = re.compile(r"\s*(?:got|current|currently|found|received|abort request)\b", re.I)


def _explains(text: str) -> bool:
    """Whether a clause of a message may explain (four words or more once
    the values it shows are left out), rather than only report values."""
    if _REPORTS.match(text):
        return False
    return _words_in(_SHOWN_VALUE.sub(" ", text)) >= 4


class Phrases:
    """The requirement and the reason a message states, with real names marked."""

    def __init__(self, flags: Iterable[str], env: Iterable[str]) -> None:
        self.flags = frozenset(flags)
        self.env = frozenset(env)

    def mark(self, text: str) -> str:
        flags = [f for f in _FLAG_RE.findall(text) if f in self.flags]
        env = named_env_vars(text, self.env)
        return _marked(text, flags, env)

    def requirement(self, words: str) -> tuple[str, str] | None:
        """(kind, text): the sentence of the message that says what is needed
        (``asks``), or what is refused (``refuses``); None for a message
        without three literal words."""
        best: tuple[int, int, str, str] | None = None
        for i, part in enumerate(sentences(words)):
            if _words_in(part) < 3:
                continue
            if _ADVICE.search(part) and not part.lower().startswith(("set of", "use of")):
                rank, kind = 0, "advises"
            elif _ASKS_FOR.search(part):
                rank, kind = 1, "asks"
            elif _REFUSES.search(part):
                rank, kind = 2, "refuses"
            else:
                rank, kind = 3, "says"
            if best is None or (rank, i) < best[:2]:
                best = (rank, i, kind, part)
        if best is None:
            return None
        return best[2], cut_text(self.mark(best[3]))

    def reason(self, words: str) -> str | None:
        """The reason a message gives (a "because" clause, or a later sentence
        or clause that explains rather than advises), or None. A clause that
        only shows values (``target.dtype={}, loaded_weight.dtype={}``, "Got
        `--x`={}", "Abort request obj.rid={}") gives none (:func:`_explains`)."""
        m = _BECAUSE.search(words)
        if m is not None and _explains(m.group(0)):
            return cut_text(self.mark(m.group(0)))
        parts = sentences(words)
        for part in parts[1:]:
            if _explains(part) and not _ADVICE.match(part) and "{}" not in part[:3]:
                return cut_text(self.mark(part))
        for part in parts[:1]:
            for clause in re.split(r";\s+|:\s+(?=[a-z])", part)[1:]:
                if _explains(clause) and not _ADVICE.match(clause):
                    return cut_text(self.mark(clause))
        return None


def cut_text(text: str, width: int = 200) -> str:
    """``text`` on one line without its closing punctuation, cut at a word
    boundary with an ellipsis past ``width`` characters (never inside a
    code span)."""
    text = " ".join(text.split()).rstrip(".,;: ")
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    if space > width // 2:
        cut = cut[:space]
    # never leave a code span open
    if cut.count("`") % 2:
        cut = cut[: cut.rfind("`")].rstrip()
    return cut.rstrip(" ,;:") + "…"
