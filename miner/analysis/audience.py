"""Who an error is for: the audience of every mined error, by rules (pure functions).

A user who hits an error needs a full card only for errors they can cause: a
setting, an input, a missing package or device, an unsupported combination.
An internal invariant needs one "this is a bug, report it" page, and errors in
tests, benchmarks and dev tools are for the people who run those.
:func:`classify` gives each :class:`~miner.model.Error` one :class:`Audience`
and says exactly what decided it (:class:`AudienceDecision`: a reason naming
the guard, the words of the message or the path rule, and the rule's key).

The rules, first match wins (keys in brackets):

1. ``test`` [path-test]: every site is in test code: a folder ``test``,
   ``tests``, ``testing``, ``unittest(s)``, ``unit_tests``, ``test_utils``, or a
   file ``test_*.py``, ``*_test.py``, ``*_tests.py``, ``test.py``, ``tests.py``,
   ``conftest.py`` (SGLang: ``python/sglang/test/``, ``multimodal_gen/test/``,
   ``.../minimax_sparse_ops/tests/``, ``.../ComfyUI_SGLDiffusion/test/``).
2. ``script`` [path-script]: every site is in a benchmark, example, script,
   doc, build or dev tool: a folder ``benchmark(s)``, ``bench``, ``example(s)``,
   ``script(s)``, ``tools``, ``3rdparty``, ``docs``, ``playground``,
   ``debug_utils`` (SGLang's dumper, dump comparator, schedule simulator, log
   parser: tools developers turn on) or a dot folder (``.github``, ``.claude``),
   or a file ``bench_*.py``, ``benchmark_*.py``, ``*_benchmark.py``,
   ``setup.py``, ``check_env.py``. Sites mixing test and script paths: ``script``.
   Code vendored into the package (a folder ``third_party``, ``vendor``,
   ``_vendor``) runs in production: its errors are ``dependency`` [path-vendored].
3. ``abstract`` [abstract]: a ``NotImplementedError`` that is the whole body of
   its function (``Site.body_only``) or in an abstract method (``Site.abstract``),
   unless its message says what is unsupported or missing (rules 5 and 6: a stub
   ``raise NotImplementedError("FP8 is not supported on NPU")`` is a feature a
   user can ask for, not a placeholder for subclasses).
4. ``user-setting``:
   [guard-setting, exit-setting] a guard (``if`` / ``while`` / ``assert`` test)
   or an early-exit condition (``Site.exits``) reads a setting of the
   configuration model: a flag, a field of an arguments class, a derived
   setting, an environment variable (:attr:`Settings.reads`, see
   :meth:`Settings.from_config` for which reads count);
   [message-flag] the message names a ``--flag`` of the model, or any other
   ``--flag`` that is not part of a shell command (``pip install --upgrade``);
   [message-env] it names an environment variable of the model;
   [message-setting] it names a field of the primary arguments class that has
   a flag (``tp_size``, ``chunked_prefill_size``: names with an underscore);
   [message-asks] it tells the user what to set ("set the environment
   variable", "export X=", "check your command-line arguments", "launch the
   server with");
   [scope-args] the raise (with a message) is in a method of the primary
   arguments class, or a checking method (``validate``, ``check``,
   ``__post_init__``, ``normalize``, ``resolve``...) of another one;
   [path-args] or in a file or folder about arguments (``arg_groups/``,
   ``server_args.py``, ``argparse_actions.py``).
   Rules scope-args and path-args yield to rule 5.
5. ``dependency``: [import-error] the exception is ``ImportError`` /
   ``ModuleNotFoundError``; [guard-import] the site is in an ``except
   ImportError`` handler; [message-dependency] the message says a package is
   missing or old ("is not installed", "pip install", "install", "upgrade",
   "version >= 2") or a device is needed ("requires CUDA", "on NPU",
   "compute capability", "sm90", "Hopper", "on this platform"; not "requires a
   CUDA tensor"); [guard-platform] or, for an error with a message, the
   innermost condition tests the platform (``not _is_cuda``, ``_is_hip``,
   ``is_sm90_supported()``, ``torch.cuda.is_available()``,
   ``get_device_capability()``, ``is_flashinfer_available()``; not a tensor's
   ``x.is_cuda``).
6. ``unsupported``: [message-unsupported] the message says "not supported",
   "unsupported", "not implemented", "only supports", "does not support",
   "only X is supported" and explains it (at least two other words:
   ``unsupported mma_n={}`` is an internal check); [not-implemented] or a
   ``NotImplementedError`` has a message.
7. ``user-input``: [message-input] the message names what a request, an API
   call or the model brings ("request", "prompt", "input_ids", "sampling
   params", "max_new_tokens", "temperature", "top_p", "logprob", "stop",
   "lora_path", "json schema", "regex", "ebnf", "tool call", "messages",
   "image", "video", "audio", "height", "model path", "chat template",
   "config.json", "checkpoint"...), unless every site is in engine internals
   (folders ``kernels``, ``layers``, ``ops``, ``models``, ``mem_cache``,
   ``model_executor``, ``distributed``, ``speculative``, ``disaggregation``...,
   where those words name tensors and batches); [path-input] a raise with a
   message (not an assert) in request-handling code (``entrypoints/``,
   ``openai_api/``, ``sampling/``, ``function_call/``, ``parser/``,
   ``constrained/``, ``io_struct.py``, ``tokenizer_manager.py``,
   ``serving_*.py``); [validator] or in a validation function outside engine
   internals (``validate*``, ``_validate*``, ``verify*``, ``normalize*``,
   ``check_*request``).
8. ``internal``: everything else: [bare-assert] asserts with no message,
   [assert] asserts whose message names nothing above, [bare-raise] raises with
   no message, [default] other invariants of the code's own state.

Message rules read only the literal text of the message (placeholders are code,
not words, and read as ``{}``); a message computed at run time is read from the
string literals of its source.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from miner.analysis.places import path_kind
from miner.model import Caught, Error, Guard, Origin, OriginKind, Site, Unreachable

if TYPE_CHECKING:
    from miner.analysis.config import ConfigModel, Derived
    from miner.analysis.links import Read


class Audience(str, Enum):
    """Who an error is for."""

    USER_SETTING = "user-setting"
    USER_INPUT = "user-input"
    DEPENDENCY = "dependency"
    UNSUPPORTED = "unsupported"
    ABSTRACT = "abstract"
    INTERNAL = "internal"
    TEST = "test"
    SCRIPT = "script"

    def __str__(self) -> str:
        return self.value


#: Audiences whose errors users can cause and fix (they get full cards).
USER_FACING = frozenset(
    {Audience.USER_SETTING, Audience.USER_INPUT, Audience.DEPENDENCY, Audience.UNSUPPORTED}
)


@dataclass(frozen=True, slots=True)
class AudienceDecision:
    """An audience and what decided it."""

    audience: Audience
    reason: str
    """What decided it, naming the guard, the words of the message or the path rule."""
    rule: str
    """The rule's key (``path-test``, ``guard-setting``, ``message-flag``...)."""

    def to_json(self) -> dict[str, str]:
        return {"audience": self.audience.value, "reason": self.reason, "rule": self.rule}


#: What a guard of a site reads, in words: ``'server_args.enable_x' reads setting --enable-x``.
GuardReader = Callable[[Guard, Site], "str | None"]

#: A folder or file that organizes arguments (``arg_groups/``, ``server_args.py``):
#: there an attribute named like a setting is that setting.
_ARGS_PATH = re.compile(r"(?:^|/)[^/]*(?:args|arg_)[^/]*(?:/|\.py$)")
#: An object expression that is (or wraps) an arguments object.
_ARGS_OBJECT = re.compile(r"(?<![A-Za-z0-9])(?:server_args|\w*_args|args)(?![A-Za-z0-9])")


@dataclass(frozen=True)
class Settings:
    """What the classifier needs to know of the configuration model."""

    flags: frozenset[str] = frozenset()
    """Every option string of the model (``--tp-size``)."""
    program_flags: frozenset[str] = frozenset()
    """The option strings of the program's options classes (``ServerArgs``):
    not those of a tool's own parser (``--source`` of a script's ``main``)."""
    env_vars: frozenset[str] = frozenset()
    """Every environment variable the code reads or declares."""
    fields: Mapping[str, str] = field(default_factory=dict)
    """Fields of the primary arguments class that have a flag, by name
    (``tp_size`` -> ``--tp-size``); only names with an underscore are kept
    (``device`` or ``port`` in a message says nothing)."""
    classes: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """The arguments classes (``ServerArgs``) with the files defining them: a
    raise in their methods is about settings."""
    primary: str | None = None
    """The primary arguments class: every raise in its methods is about settings
    (in the others, only in validation methods)."""
    reads: GuardReader | None = None
    """Tells whether a guard test (of a site) reads a setting: a phrase naming
    the expression and the setting (``'server_args.enable_x' reads setting
    --enable-x``), or None."""

    @classmethod
    def from_config(
        cls, config: ConfigModel, predicates: Mapping[str, Derived] | None = None
    ) -> Settings:
        """Settings of ``config``; guards are linked with :class:`~miner.analysis.links.Linker`.

        A read the linker makes only by name (``cfg.enable_eplb``) counts when
        the object is an arguments object by its name (``model_runner.server_args``,
        ``resolved_view(server_args)``, ``self.args``), when the site is a method
        of an arguments class reading ``self.x``, or when the site's file or
        folder is about arguments (``arg_groups/``, ``server_args.py``).
        """
        from miner.analysis.links import Linker

        linker = Linker(config, dict(predicates or {}))
        paths: dict[str, set[str]] = {}
        for opt in config.options:
            if opt.owner in config.classes:
                paths.setdefault(opt.owner, set()).add(opt.path)
        classes = {name: frozenset(found) for name, found in sorted(paths.items())}

        def counts(read: Read, site: Site) -> bool:
            return reads_setting(read, site, classes)

        def reads(guard: Guard, site: Site) -> str | None:
            if guard.kind not in ("if", "while", "assert"):
                return None
            for clause in linker.link_guard(0, guard, site.path).clauses:
                read = clause.read
                if read is None or not counts(read, site):
                    continue
                if read.kind == "env":
                    return f"'{read.text}' reads env var {read.target}"
                if read.kind == "option":
                    opt = config.option_in(read.target, read.option_path)
                    name = (opt.flag or f"{opt.owner}.{opt.name}") if opt else read.target
                    return f"'{read.text}' reads setting {name}"
                derived = config.derived_setting(read.target)
                owner = f"{derived.owner}." if derived is not None and derived.owner else ""
                return f"'{read.text}' reads derived setting {owner}{read.target}()"
            return None

        primary = config.primary
        fields = {
            o.name: o.flags[0]
            for o in config.options
            if o.owner == primary and o.flags and "_" in o.name.strip("_") and not o.deprecated_for
        }
        return cls(
            flags=config.flag_names(),
            program_flags=frozenset(
                f for o in config.options if options_class(o.owner) for f in o.flags
            ),
            env_vars=frozenset(e.name for e in config.env),
            fields=dict(sorted(fields.items())),
            classes=classes,
            primary=primary,
            reads=reads,
        )


def reads_setting(read: Read, site: Site, classes: Mapping[str, frozenset[str]]) -> bool:
    """Does ``read`` (of a guard of ``site``) read the setting itself?

    An exact read does. A read by name only does when the object is an
    arguments object by its name (``model_runner.server_args``,
    ``resolved_view(server_args)``, ``self.args``), when the site is a method
    of an arguments class (``classes``: class -> the files defining it)
    reading ``self.x``, or when the site's file or folder is about arguments
    (``arg_groups/``, ``server_args.py``).
    """
    if read.exact:
        return True
    if read.kind == "env" or "." not in read.text:
        return _ARGS_PATH.search(site.path) is not None
    base = read.text.rsplit(".", 1)[0]
    if _ARGS_OBJECT.search(base):
        return True
    if base == "self" and site.path in classes.get(site.scope.split(".")[0], ()):
        return True
    return _ARGS_PATH.search(site.path) is not None


# --------------------------------------------------------------------------- messages


def message_text(error: Error) -> str:
    """The words of the message: literal parts with placeholders as ``{}``, or
    the message's source when it is computed at run time; ``""`` without one."""
    if error.message_parts:
        return "".join("{}" if p.expr is not None else (p.text or "") for p in error.message_parts)
    if error.message:
        return error.message
    source = error.primary.message_source or ""
    return " ".join(m.group(2) for m in _STRING.finditer(source))


_STRING = re.compile(r"""(['"])((?:\\.|(?!\1).)*)\1""")


_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*[A-Za-z0-9]")
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?![\w(])")
_ENV = re.compile(r"(?<![\w])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w])")

_ASKS = (
    r"set the (?:env(?:ironment)? var(?:iable)?|flag|option)",
    r"(?:set|export) (?:the )?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:=| to )",
    r"(?:check|set|change|adjust|pass|use|review) (?:your |the )?(?:command[- ]line|server|cli) "
    r"(?:arg|flag|option|setting)",
    r"(?:launch|start|restart) the server with",
)
#: Shell commands in a message: a ``--flag`` after these is not a setting.
_SHELL = re.compile(r"(?:pip3?|uv|cargo|conda|apt(?:-get)?|nvcc|make|cmake|git)\b[^.;:]*$", re.I)

#: Devices and platforms named in messages.
_DEVICE = (
    r"(?:cuda|rocm|hip|npu|xpu|nvidia|amd|ascend|musa|mps|hopper|blackwell|ampere"
    r"|sm_?\d{2,3}[a-z]?|torch_npu|gpus?)"
)
_DEPENDENCY = (
    r"is not installed",
    r"not installed",
    r"pip install",
    r"please install",
    r"\b(?:re)?install\b",
    r"(?:no module named|failed to import|cannot import|could not import|unable to import)",
    rf"(?:requires?|needs?|needed) (?:an? |the )?(?:\w+ ){{0,2}}{_DEVICE}\b(?![/ \w]*tensor)",
    rf"\b(?:on|for) (?:an? |the )?(?:\w+ )?{_DEVICE.replace('|gpus?', '')}\b",
    r"cuda is not available",
    r"compute capability",
    r"\bsm_?\d{2,3}[a-z]?\b",
    r"\b(?:hopper|blackwell|ampere)\b",
    r"not available on (?:this|the current|your) (?:platform|device|system|gpu|hardware)",
    r"(?:this|the current|your) (?:platform|device type|gpu|hardware)",
    r"\bupgrade\b",
    r"(?:newer|later|older) version",
    r"version (?:of \w+ )?(?:>=|<=|>|<|\d)",
)

_UNSUPPORTED = (
    r"not (?:yet |officially |currently )?supported",
    r"unsupported",
    r"not (?:yet )?implemented",
    r"only supports?",
    r"(?:does|do) not (?:currently |yet )?support",
    r"(?:doesn't|don't) (?:currently |yet )?support",
    r"implements? neither",
    r"cannot support",
    r"no support",
    r"only \S+(?: \S+){0,6} (?:is|are) supported",
)

_INPUT = (
    r"\brequests?\b",
    r"\bprompts?\b",
    r"negative_prompt",
    r"input[_ ]ids",
    r"input[_ ]embeds",
    r"sampling[_ ]param",
    r"max_new_tokens",
    r"max_tokens",
    r"max_completion_tokens",
    r"\btemperature\b",
    r"\btop_[pk]\b",
    r"\bmin_p\b",
    r"logprob",
    r"logit_bias",
    r"\bstop(?:_token_ids|_str|_regex)?\b",
    r"lora[_ ]?(?:path|name|adapter|id|nickname)s?",
    r"json[_ ]schema",
    r"response_format",
    r"\bregex\b",
    r"\bebnf\b",
    r"structural[_ ]tag",
    r"tool[_ ]calls?",
    r"tool_choice",
    r"function[_ ]call",
    r"\bmessages\b",
    r"\bimages?\b",
    r"\baudios?\b",
    r"\bvideos?\b",
    r"model[_ ]path",
    r"chat[_ ]template",
    r"\bcontext length\b",
    r"\bcontext_len\b",
    r"\b(?:rid|request_id)\b",
    r"\b(?:height|width)\b",
    r"(?:model_index|config)\.json",
    r"quant(?:ization)? config",
    r"\bcheckpoints?\b",
    r"safetensors",
)
#: Folders of engine internals (kernels, layers, caches, workers): there the
#: words of :data:`_INPUT` name tensors and batches, not what users send.
_ENGINE_DIRS = frozenset(
    {
        "kernels",
        "layers",
        "ops",
        "hardware_backend",
        "mem_cache",
        "model_executor",
        "distributed",
        "speculative",
        "disaggregation",
        "compilation",
        "eplb",
        "batch_overlap",
        "models",
        "kv_canary",
        "weight_cache",
        "model_loader",
    }
)


def named_flags(words: str) -> list[str]:
    """The ``--flags`` a message names, in order, leaving out those of shell
    commands it quotes (``pip install --upgrade x``)."""
    return [m.group(0) for m in _FLAG.finditer(words) if not _SHELL.search(words[: m.start()])]


def named_env_vars(words: str, known: Iterable[str]) -> list[str]:
    """The environment variables of ``known`` a message names, in order."""
    names = set(known)
    return [m.group(0) for m in _ENV.finditer(words) if m.group(0) in names]


def _compile(words: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{w})" for w in words), re.I)


_ASK_RE = _compile(_ASKS)
_DEPENDENCY_RE = _compile(_DEPENDENCY)
_UNSUPPORTED_RE = _compile(_UNSUPPORTED)
_INPUT_RE = _compile(_INPUT)

_PLATFORM_GUARD = re.compile(
    r"(?<![\w.])_?(?:is_(?:cuda|hip|npu|xpu|cpu|mps|musa|cuda_alike|gfx\w*|sm\d+\w*"
    r"|blackwell\w*|hopper\w*)"
    r"|is_\w+_available|is_\w+_supported|get_device_capability|get_device_sm|get_device_name"
    r"|has_\w+_support)\b"
    r"|\.(?:is_(?:cuda|hip|npu|xpu|cpu|mps|musa)|is_available|get_device_capability)\(\)"
)
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")

_INPUT_DIRS = (
    "entrypoints/",
    "openai_api/",
    "sampling/",
    "function_call/",
    "parser/",
    "constrained/",
)
_INPUT_FILES = ("io_struct.py", "tokenizer_manager.py", "serving_")
#: Methods of an arguments class that check or resolve its values.
_CHECKER = re.compile(
    r"_*(?:validate|verify|check|normalize|parse|post_init|adjust|handle|resolve)"
)
_VALIDATOR = re.compile(r"(?:^|[._])_*(?:validate|verify|check_\w*request|normalize)\w*$")


def _short(exception: str | None) -> str:
    return (exception or "").rsplit(".", 1)[-1].split("(")[0]


def _said(pattern: re.Pattern[str], text: str) -> str | None:
    """The phrase of ``text`` matched by ``pattern`` (lower case), or None."""
    m = pattern.search(text)
    return " ".join(m.group(0).lower().split()) if m else None


# --------------------------------------------------------------------------- rules


_MAIN_BLOCK = re.compile(
    r"""^(?:__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)$"""
)


def main_block(site: Site) -> tuple[str, str] | None:
    """``("script", rule text)`` when ``site`` is inside an ``if __name__ ==
    "__main__":`` block (a module's self-test or command line, which the
    program never runs when it imports the module), else None."""
    for guard in site.guards:
        if guard.kind == "if" and not guard.negated and _MAIN_BLOCK.match(guard.test.strip()):
            return "script", f'{site.path}:{guard.line} (if __name__ == "__main__" block)'
    return None


def _by_path(error: Error) -> AudienceDecision | None:
    kinds = [path_kind(s.path) or main_block(s) for s in error.sites]
    if any(k is None for k in kinds):
        return None
    found = [k for k in kinds if k is not None]
    vendored = [text for kind, text in found if kind == "vendored"]
    if vendored:
        return AudienceDecision(Audience.DEPENDENCY, f"path: {vendored[0]}", "path-vendored")
    tests = [text for kind, text in found if kind == "test"]
    if len(tests) == len(found):
        return AudienceDecision(Audience.TEST, f"path: {tests[0]}", "path-test")
    scripts = [text for kind, text in found if kind == "script"]
    return AudienceDecision(Audience.SCRIPT, f"path: {scripts[0]}", "path-script")


def _abstract(error: Error, words: str) -> AudienceDecision | None:
    if _short(error.exception) != "NotImplementedError":
        return None
    site = next((s for s in error.sites if s.body_only or s.abstract), None)
    if site is None:
        return None
    said = _said(_UNSUPPORTED_RE, words) or _said(_DEPENDENCY_RE, words)
    if said is not None:
        return None
    if site.abstract:
        reason = f"NotImplementedError in abstract method {site.scope}"
    else:
        reason = f"NotImplementedError is the whole body of {site.scope}"
    return AudienceDecision(Audience.ABSTRACT, reason, "abstract")


def _condition_guards(site: Site) -> Iterable[tuple[str, Guard]]:
    for guard in site.guards:
        yield "guard", guard
    for guard in site.exits:
        yield "exit condition", guard


def _setting(error: Error, words: str, settings: Settings) -> AudienceDecision | None:
    if settings.reads is not None:
        for site in error.sites:
            for label, guard in _condition_guards(site):
                phrase = settings.reads(guard, site)
                if phrase:
                    rule = "guard-setting" if label == "guard" else "exit-setting"
                    return AudienceDecision(Audience.USER_SETTING, f"{label} {phrase}", rule)
    flags = named_flags(words)
    if flags:
        known = [f for f in flags if f in settings.flags]
        note = "" if known else " (not in the configuration model)"
        reason = f"message names --flag '{(known or flags)[0]}'{note}"
        return AudienceDecision(Audience.USER_SETTING, reason, "message-flag")
    names = named_env_vars(words, settings.env_vars)
    if names:
        reason = f"message names env var '{names[0]}'"
        return AudienceDecision(Audience.USER_SETTING, reason, "message-env")
    for m in _WORD.finditer(words):
        flag = settings.fields.get(m.group(0))
        if flag is not None:
            return AudienceDecision(
                Audience.USER_SETTING,
                f"message names setting '{m.group(0)}' ({flag})",
                "message-setting",
            )
    said = _said(_ASK_RE, words)
    if said is not None:
        return AudienceDecision(Audience.USER_SETTING, f"message says '{said}'", "message-asks")
    if error.message_kind == "none" or _dependency(error, words) is not None:
        return None
    for site in error.sites:
        owner, _, method = site.scope.partition(".")
        if (
            site.path in settings.classes.get(owner, ())
            and method
            and (owner == settings.primary or _CHECKER.match(method.split(".")[-1]))
        ):
            return AudienceDecision(
                Audience.USER_SETTING,
                f"scope {site.scope} is a method of the arguments class {owner}",
                "scope-args",
            )
        found = _ARGS_PATH.search(site.path)
        if found:
            where = site.path[: found.end()]
            return AudienceDecision(
                Audience.USER_SETTING, f"path: {where} (argument handling)", "path-args"
            )
    return None


def _dependency(error: Error, words: str) -> AudienceDecision | None:
    name = _short(error.exception)
    if name in _IMPORT_ERRORS:
        return AudienceDecision(
            Audience.DEPENDENCY, f"exception {name} (a missing package)", "import-error"
        )
    for site in error.sites:
        for guard in site.guards:
            if guard.kind in ("except", "except*") and any(e in guard.test for e in _IMPORT_ERRORS):
                return AudienceDecision(
                    Audience.DEPENDENCY,
                    f"guard '{guard.describe()}' (a missing package)",
                    "guard-import",
                )
    said = _said(_DEPENDENCY_RE, words)
    if said is not None:
        return AudienceDecision(Audience.DEPENDENCY, f"message says '{said}'", "message-dependency")
    if not words:
        return None
    for site in error.sites:
        decisive = [g for g in site.guards if g.kind in ("if", "while", "assert")][-1:]
        tests = [("guard", g) for g in decisive] + [("exit condition", g) for g in site.exits]
        for label, guard in tests:
            m = _PLATFORM_GUARD.search(guard.test)
            if m:
                return AudienceDecision(
                    Audience.DEPENDENCY,
                    f"{label} '{guard.describe()}' tests the platform ({m.group(0).lstrip('.')})",
                    "guard-platform",
                )
    return None


def terse(words: str) -> bool:
    """A message of fewer than two words besides "unsupported" and what it
    reports (``unsupported mma_n={}``): an internal check, not an explanation."""
    text = _UNSUPPORTED_RE.sub(" ", words.replace("{}", " "))
    return len(re.findall(r"(?<![\w=])[A-Za-z]{2,}(?![\w=])", text)) < 2


def _unsupported(error: Error, words: str) -> AudienceDecision | None:
    said = _said(_UNSUPPORTED_RE, words)
    if said is not None and not terse(words):
        return AudienceDecision(
            Audience.UNSUPPORTED, f"message says '{said}'", "message-unsupported"
        )
    if _short(error.exception) == "NotImplementedError" and words:
        return AudienceDecision(
            Audience.UNSUPPORTED, "NotImplementedError with a message", "not-implemented"
        )
    return None


def engine_dir(path: str) -> str | None:
    """The first folder of ``path`` that holds engine internals, or None."""
    return next((f for f in path.split("/")[:-1] if f in _ENGINE_DIRS), None)


def _input(error: Error, words: str) -> AudienceDecision | None:
    said = _said(_INPUT_RE, words)
    if said is not None and not all(engine_dir(s.path) for s in error.sites):
        return AudienceDecision(Audience.USER_INPUT, f"message says '{said}'", "message-input")
    if not words or _short(error.exception) == "AssertionError":
        return None
    for site in error.sites:
        if engine_dir(site.path) is not None:
            continue
        hit = next((d for d in _INPUT_DIRS if f"/{d}" in f"/{site.path}"), None)
        if hit is None:
            name = site.path.rsplit("/", 1)[-1]
            hit = next((f for f in _INPUT_FILES if name.startswith(f)), None)
        if hit is not None:
            return AudienceDecision(
                Audience.USER_INPUT,
                f"path: {hit} (request handling) with message",
                "path-input",
            )
        if _VALIDATOR.search(site.scope):
            return AudienceDecision(
                Audience.USER_INPUT, f"scope {site.scope} validates inputs", "validator"
            )
    return None


def _internal(error: Error, words: str) -> AudienceDecision:
    site = error.primary
    if site.kind == "assert" and site.message_kind == "none":
        return AudienceDecision(
            Audience.INTERNAL, "assert with no message: an invariant of the code", "bare-assert"
        )
    if site.kind == "assert":
        return AudienceDecision(
            Audience.INTERNAL,
            "assert whose message names no setting, input or dependency",
            "assert",
        )
    if site.message_kind == "none":
        return AudienceDecision(
            Audience.INTERNAL, f"{_short(error.exception) or 'raise'} with no message", "bare-raise"
        )
    return AudienceDecision(
        Audience.INTERNAL, "message names no setting, input or dependency", "default"
    )


def classify(error: Error, settings: Settings | None = None) -> AudienceDecision:
    """The audience of ``error`` and what decided it (rules in the module docstring)."""
    settings = settings or Settings()
    words = message_text(error)
    return (
        _by_path(error)
        or _abstract(error, words)
        or _setting(error, words, settings)
        or _dependency(error, words)
        or _unsupported(error, words)
        or _input(error, words)
        or _internal(error, words)
    )


def classify_all(
    errors: Iterable[Error], settings: Settings | None = None
) -> dict[str, AudienceDecision]:
    """Error id -> decision, for every error."""
    return {e.error_id: classify(e, settings) for e in errors}


# --------------------------------------------------------------------------- from origins

#: The audience each user-controlled origin kind makes an error for.
ORIGIN_AUDIENCE: dict[OriginKind, Audience] = {
    OriginKind.FLAG: Audience.USER_SETTING,
    OriginKind.ENV: Audience.USER_SETTING,
    OriginKind.REQUEST: Audience.USER_INPUT,
    OriginKind.MODEL_CONFIG: Audience.USER_INPUT,
    OriginKind.CHECKPOINT: Audience.USER_INPUT,
    OriginKind.PACKAGE: Audience.DEPENDENCY,
    OriginKind.HARDWARE: Audience.DEPENDENCY,
}
#: When origins of several kinds decide, and no word of the message breaks the tie.
_ORIGIN_ORDER = (Audience.USER_SETTING, Audience.DEPENDENCY, Audience.USER_INPUT)


def options_class(owner: str) -> bool:
    """Whether a flag's ``owner`` is an options class of the program
    (``ServerArgs``), not the function or module that builds a tool's
    parser (``parse_args``, ``main``, ``<module>``)."""
    return owner[:1].isupper()


def script_flag(origin: Origin) -> bool:
    """A flag of a tool's own command line (:func:`options_class` is false
    for its owner)."""
    return origin.kind is OriginKind.FLAG and not options_class(origin.owner)


def _deciding(origins: tuple[Origin, ...]) -> dict[Audience, Origin]:
    """The first origin of each audience among the condition's (and the
    callers' conditions') user-controlled origins. When the trace of these
    origins stopped somewhere (an ``unknown`` among them), a user-controlled
    value that is only an operand (constraint ``any``: ``size % page_size``)
    does not decide: what it is compared with is not known. A tool's flag
    (:func:`script_flag`) decides nothing here."""
    partial = any(o.kind is OriginKind.UNKNOWN and o.role != "message" for o in origins)
    found: dict[Audience, Origin] = {}
    for origin in origins:
        audience = ORIGIN_AUDIENCE.get(origin.kind)
        if origin.role == "message" or audience is None or script_flag(origin):
            continue
        if partial and origin.constraint.op == "any":
            continue
        found.setdefault(audience, origin)
    return found


def decisive(site: Site, origins: tuple[Origin, ...]) -> tuple[Origin, ...]:
    """The origins that make the site raise.

    Those the innermost ``if`` / ``while`` / ``assert`` around it reads, when
    one of them is under the user's control or runtime state; an ``assert``
    (an invariant of the code where it stands) has only its own test.
    Otherwise (its reads end in constants or ``unknown``, which do not say
    what varies): the user-controlled origins of every such guard, else
    those of the innermost. Only a site under no such guard is decided by
    every origin: its early exits and its callers' conditions (under a guard
    they are the way to the raise, not its cause)."""
    guards = [g.line for g in site.guards if g.kind in ("if", "while", "assert")]

    def read_at(lines: list[int]) -> tuple[Origin, ...]:
        return tuple(
            o for o in origins if o.role == "condition" and o.chain and o.chain[0].line in lines
        )

    inner = read_at(guards[-1:])
    if site.kind == "assert" or any(o.user or o.kind is OriginKind.INTERNAL for o in inner):
        return inner
    outer = tuple(o for o in read_at(guards) if o.user)
    return outer or (inner if guards else origins)


def _unseen(logged: Caught | None, unreachable: Unreachable | None) -> AudienceDecision | None:
    """``internal`` for an error no user meets: unreachable, or caught and not raised again."""
    if unreachable is not None:
        reason = _unreachable_reason(unreachable)
        return AudienceDecision(Audience.INTERNAL, reason, "origin-unreachable")
    if logged is not None:
        caught = logged.types or "everything"
        return AudienceDecision(
            Audience.INTERNAL,
            f"caught by except {caught} at {logged.path}:{logged.line} and not raised again",
            "origin-logged",
        )
    return None


def _unreachable_reason(fact: Unreachable) -> str:
    """Why no in-tree call reaches the site, by :attr:`Unreachable.way`."""
    where = f"{fact.path}:{fact.line}"
    if fact.way == "dispatch":
        every = ", ".join(fact.choices)
        return f"every value of {fact.subject} ({every}) is handled before the else ({where})"
    if fact.way == "callers":
        return (
            f"every call is made only when {fact.condition} ({where}), which rules out {fact.guard}"
        )
    if fact.way == "uncalled":
        return f"no file of the commit calls or names {fact.condition} ({where})"
    return f"no in-tree call makes {fact.condition} hold ({where})"


def _combination(
    error: Error,
    origins: tuple[Origin, ...],
    deciding: dict[Audience, Origin],
    settings: Settings | None,
) -> AudienceDecision | None:
    """``unsupported`` when only a package or the hardware decides and a
    guard around the raise (not the innermost) reads a flag or variable, or
    the message names one (:func:`_advice`: "--fp8-gemm-backend=cutlass is
    deprecated on this hardware")."""
    if set(deciding) != {Audience.DEPENDENCY}:
        return None
    site = error.primary
    advice = _advice(error, message_text(error), settings)
    if advice is not None:
        reason = f"{_named(deciding[Audience.DEPENDENCY])}; {advice.reason}"
        return AudienceDecision(Audience.UNSUPPORTED, reason, "origin-combination")
    outer = [g.line for g in site.guards if g.kind in ("if", "while")][:-1]
    setting = next(
        (
            o
            for o in origins
            if o.role == "condition"
            and o.chain
            and o.chain[0].line in outer
            and o.kind in (OriginKind.FLAG, OriginKind.ENV)
            and not script_flag(o)
            and o.constraint.op != "any"
        ),
        None,
    )
    if setting is None:
        return None
    reason = f"{_named(deciding[Audience.DEPENDENCY])} under {_named(setting)}"
    return AudienceDecision(Audience.UNSUPPORTED, reason, "origin-combination")


def _advice(error: Error, words: str, settings: Settings | None) -> AudienceDecision | None:
    """``user-setting`` when the message names a flag of the program's
    options classes or a variable the configuration model defines (the
    code's own advice: "Please try to increase --mem-fraction-static");
    None otherwise. A tool's own flag (``--source`` of a script's parser)
    is no advice to the user of the program."""
    known = settings.program_flags if settings is not None else frozenset()
    flags = [f for f in named_flags(words) if f in known]
    if flags:
        return AudienceDecision(
            Audience.USER_SETTING, f"message names the flag '{flags[0]}'", "origin-advice"
        )
    names = named_env_vars(words, settings.env_vars if settings is not None else ())
    if names:
        return AudienceDecision(
            Audience.USER_SETTING, f"message names the variable '{names[0]}'", "origin-advice"
        )
    return None


def _undecided(
    error: Error, words: str, origins: tuple[Origin, ...], settings: Settings | None
) -> AudienceDecision:
    """The audience when no user-controlled origin decides (rules of
    :func:`classify_by_origins`): the message's advice, else a tool's own
    flag (``script``), else program state (``internal``), else the word
    rules when the condition reads nothing."""
    advice = _advice(error, words, settings)
    if advice is not None:
        return _unsupported_advice(error, words, advice) or advice
    tool = next((o for o in origins if o.role != "message" and script_flag(o)), None)
    if tool is not None:
        return AudienceDecision(Audience.SCRIPT, _named(tool), "origin-script")
    if any(o.role != "message" for o in origins):
        reads = ", ".join(dict.fromkeys(o.read for o in origins if o.role != "message"))
        return AudienceDecision(
            Audience.INTERNAL,
            f"condition reads only program state ({reads})",
            "origin-internal",
        )
    return classify(error, settings)


def _unsupported_advice(
    error: Error, words: str, advice: AudienceDecision
) -> AudienceDecision | None:
    """``unsupported`` when the message that names a flag or variable
    (:func:`_advice`) also says the combination is not supported
    ("XPUAttentionBackend doesn't support speculative decoding yet, please
    use --attention-backend triton"): the named setting is the way out, not
    the cause."""
    said = _unsupported(error, words)
    if said is None:
        return None
    return AudienceDecision(
        Audience.UNSUPPORTED, f"{said.reason}; {advice.reason}", "origin-unsupported"
    )


def _named(origin: Origin) -> str:
    where = f" ({origin.owner})" if origin.owner else ""
    return f"{origin.kind.value} {origin.name}{where} via {origin.read}"


def classify_by_origins(
    error: Error,
    origins: Iterable[Origin],
    settings: Settings | None = None,
    logged: Caught | None = None,
    unreachable: Unreachable | None = None,
) -> AudienceDecision:
    """The audience of ``error`` from what its condition reads (issue 33, item 2).

    Path rules (test, script, vendored) and ``abstract`` stay first. Then
    [origin-*] the user-controlled origins of the condition and of the
    conditions around the calls of its function decide: a flag or a
    variable ``user-setting``; a request, model config or checkpoint field
    ``user-input``; a package or the hardware ``dependency``; any of them
    with a ``NotImplementedError`` or a message saying "not supported"
    ``unsupported``. Several kinds: the word rules (:func:`classify`) break
    the tie when they name one of them, else flag before package before
    request. [origin-advice] no user-controlled origin, but the message
    names a flag or variable of the configuration model: ``user-setting``
    (``unsupported`` when it also says "not supported": the setting it
    names is the way out). [origin-script] only a flag of a tool's own parser decides
    (:func:`script_flag`): ``script``.
    [origin-internal] a condition whose origins are all internal state,
    constants or unknown: ``internal``. The user-controlled origins of the
    innermost ``if`` / ``while`` / ``assert`` count first, then those of the
    other guards, then the early exits' and the callers' (the way to the
    raise, not its cause): :func:`decisive`. No origin at all (a raise its
    function always reaches, no call condition known): :func:`classify`
    decides. The reason names the origins.

    [origin-unreachable] no in-tree call can make the condition true
    (``unreachable``) and [origin-logged] a handler catches the error without
    raising again (``logged``): ``internal``, whatever the origins, since no
    user meets it as an error; in vendored code too (which is otherwise
    ``dependency``), not in tests and scripts. [origin-unsupported] a package or the hardware
    decides under a guard that reads a flag or variable: the combination is
    not implemented (``--fp8-gemm-backend cutlass`` on a GPU it does not
    serve)."""
    all_origins = tuple(origins)
    words = message_text(error)
    fixed = _by_path(error)
    if fixed is not None and fixed.rule == "path-vendored":
        fixed = _unseen(logged, unreachable) or fixed  # vendored code no call reaches
    fixed = fixed or _abstract(error, words) or _unseen(logged, unreachable)
    if fixed is not None:
        return fixed
    origins = decisive(error.primary, all_origins)
    deciding = _deciding(origins)
    if not deciding:
        return _undecided(error, words, origins, settings)
    return _combination(error, all_origins, deciding, settings) or _decided(
        error, words, deciding, settings
    )


def _decided(
    error: Error, words: str, deciding: dict[Audience, Origin], settings: Settings | None
) -> AudienceDecision:
    """The audience of the user-controlled origins that decide
    (:func:`classify_by_origins`): ``unsupported`` when the message says so,
    else the one the word rules name among them, else the first of
    :data:`_ORIGIN_ORDER`."""
    unsupported = _unsupported(error, words)
    if unsupported is not None:
        first = next(iter(deciding.values()))
        return AudienceDecision(
            Audience.UNSUPPORTED,
            f"{unsupported.reason}; reached through {_named(first)}",
            "origin-unsupported",
        )
    by_words = classify(error, settings).audience
    audience = by_words if by_words in deciding else next(a for a in _ORIGIN_ORDER if a in deciding)
    return AudienceDecision(audience, _named(deciding[audience]), f"origin-{audience.value}")
