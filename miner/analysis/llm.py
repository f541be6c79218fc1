"""Optional LLM writer: rewrites the four prose sections of a card from the mined facts only.

Any OpenAI-compatible chat endpoint works (an SGLang server is one):
``POST {base_url}/chat/completions`` with a JSON-schema ``response_format``.
Each answer is validated: every flag (``--x``), environment variable
(``UPPER_CASE`` with an underscore) and code span it names must appear in the
facts sent; otherwise the card keeps the rule text. Answers (valid or not)
are cached on disk, keyed by error id, facts hash, prompt version and model,
so regenerating a release only asks about new or changed errors. Requests run
with bounded concurrency, a timeout and retries; the endpoint can never fail
the run (every failure falls back to the rule text, with a log line).

Only the stdlib is used (``urllib``, ``concurrent.futures``): one JSON POST per
card needs no HTTP client library.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from miner.analysis.facts import RepoFacts
from miner.analysis.links import GuardLink, linked_reads
from miner.model import Analysis, Error, MineResult

log = logging.getLogger("miner")

#: Bump when the prompt or the schema changes: old cache entries are then unused.
PROMPT_VERSION = 1

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "what_it_means": {"type": "string"},
        "trigger": {"type": "string"},
        "situations": {"type": "array", "items": {"type": "string"}},
        "solutions": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["what_it_means", "trigger", "situations", "solutions"],
    "additionalProperties": False,
}

SYSTEM_PROMPT = (
    "You write the prose sections of an error card for users of a Python project. "
    "Use ONLY the facts given as JSON: the exception, message, source location, guards, "
    "the settings they are linked to (flags with their choices and defaults, environment "
    "variables), callers, and a draft written by rules. Never name a flag, environment "
    "variable, value or identifier that is not in the facts. Put flags, variables, values "
    "and code in backticks. Answer with JSON matching the schema: what_it_means (a short "
    "paragraph), trigger (when it happens, in terms of the settings), situations (common "
    "situations, one sentence each), solutions (numbered steps without the numbers)."
)


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Where and how to ask."""

    base_url: str
    """The endpoint's base URL, e.g. ``http://127.0.0.1:30000/v1``."""
    model: str
    cache_dir: Path
    api_key: str | None = None
    concurrency: int = 4
    timeout: float = 60.0
    """Seconds per request."""
    retries: int = 2
    """Extra attempts after a failed request (network error, 5xx, bad JSON)."""


def card_facts(
    error: Error, analysis: Analysis, links: tuple[GuardLink, ...], config: Any
) -> dict[str, Any]:
    """The facts of one card sent to the model (and hashed for the cache)."""
    site = error.primary
    settings: list[dict[str, Any]] = []
    env: list[dict[str, Any]] = []
    for _, read in linked_reads(links):
        if read.kind == "env":
            var = config.env_var(read.target)
            env.append({"name": read.target, "default": var.default if var else None})
            continue
        names = [read.target]
        derived = config.derived_setting(read.target)
        if derived is not None:
            names = [c.name for c in derived.conditions]
        for name in names:
            opt = config.option(name)
            if opt is not None:
                settings.append(
                    {
                        "field": opt.name,
                        "flags": list(opt.flags) + list(config.aliases_of(opt.name)),
                        "choices": list(opt.choices or ()),
                        "default": opt.default,
                        "help": opt.help,
                    }
                )
    return {
        "error_id": error.error_id,
        "exception": error.exception,
        "message": error.message,
        "path": site.path,
        "line": site.line,
        "scope": site.scope,
        "class_doc": site.class_doc,
        "function_doc": site.function_doc,
        "guards": [g.describe() for g in site.guards],
        "condition": analysis.condition_text,
        "links": list(analysis.evidence),
        "settings": settings,
        "environment": env,
        "excerpt": site.excerpt.text,
        "draft": {
            "what_it_means": analysis.what_it_means,
            "trigger": analysis.trigger,
            "situations": list(analysis.situations),
            "solutions": list(analysis.solutions),
        },
    }


def facts_hash(facts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def cache_key(error_id: str, digest: str, model: str) -> str:
    """File name of a cached answer: error id, facts hash, prompt version, model."""
    raw = f"{error_id}\0{digest}\0{PROMPT_VERSION}\0{model}".encode()
    return f"{error_id}-{hashlib.sha256(raw).hexdigest()[:24]}.json"


_FLAG = re.compile(r"(?<![\w-])--[A-Za-z0-9][\w-]*")
_ENV = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
_SPAN = re.compile(r"`([^`]+)`")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def validate(answer: Any, facts: dict[str, Any]) -> str | None:
    """None when ``answer`` is well formed and names only what the facts name,
    else the reason it is rejected."""
    if not isinstance(answer, dict):
        return "not a JSON object"
    for key in ("what_it_means", "trigger"):
        if not isinstance(answer.get(key), str) or not answer[key].strip():
            return f"missing {key}"
    for key in ("situations", "solutions"):
        items = answer.get(key)
        if (
            not isinstance(items, list)
            or not items
            or not all(isinstance(i, str) and i.strip() for i in items)
        ):
            return f"missing {key}"
    known = json.dumps(facts, sort_keys=True, ensure_ascii=False)
    flags = set(_FLAG.findall(known))
    words = set(_IDENT.findall(known))
    text = "\n".join(
        [answer["what_it_means"], answer["trigger"], *answer["situations"], *answer["solutions"]]
    )
    for flag in _FLAG.findall(text):
        if flag.split("=", 1)[0] not in flags:
            return f"names the flag {flag}, which is not in the facts"
    for var in _ENV.findall(text):
        if var not in words:
            return f"names {var}, which is not in the facts"
    for span in _SPAN.findall(text):
        for ident in _IDENT.findall(span):
            if (
                len(ident) > 2
                and ident not in words
                and ident.lower()
                not in ("true", "false", "none", "python", "pip", "install", "export", "unset")
            ):
                return f"names `{ident}`, which is not in the facts"
    return None


def _post(settings: LLMSettings, facts: dict[str, Any]) -> Any:
    """One chat completion; the parsed JSON answer. Raises on any failure."""
    body = {
        "model": settings.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": json.dumps(facts, sort_keys=True, ensure_ascii=False)},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "error_card", "schema": SCHEMA, "strict": True},
        },
    }
    headers = {"Content-Type": "application/json"}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    request = urllib.request.Request(
        settings.base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers=headers,
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=settings.timeout) as response:
        payload = json.loads(response.read().decode("utf-8"))
    content = payload["choices"][0]["message"]["content"]
    return json.loads(content)


def ask(settings: LLMSettings, facts: dict[str, Any]) -> Any | None:
    """The model's answer, retried; None (logged) when the endpoint keeps failing."""
    for attempt in range(settings.retries + 1):
        try:
            return _post(settings, facts)
        except urllib.error.HTTPError as exc:
            reason = f"HTTP {exc.code}"
            if 400 <= exc.code < 500 and exc.code != 429:
                log.warning(
                    "%s: LLM endpoint refused (%s); rule text kept", facts["error_id"], reason
                )
                return None
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
        if attempt < settings.retries:
            time.sleep(min(0.5 * 2**attempt, 4.0))
    log.warning("%s: LLM endpoint failed (%s); rule text kept", facts["error_id"], reason)
    return None


def _read_cache(path: Path) -> tuple[bool, Any]:
    try:
        return True, json.loads(path.read_text(encoding="utf-8"))["answer"]
    except (OSError, ValueError, KeyError, TypeError):
        return False, None


def _write_cache(path: Path, answer: Any) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"answer": answer, "prompt_version": PROMPT_VERSION}, handle, sort_keys=True)
        Path(tmp).replace(path)
    except OSError as exc:
        log.warning("%s: cannot write the LLM cache (%s)", path, exc)


def rewrite(
    result: MineResult,
    repo_facts: RepoFacts,
    analyses: dict[str, Analysis],
    links: dict[str, tuple[GuardLink, ...]],
    settings: LLMSettings,
) -> dict[str, Analysis]:
    """``analyses`` with the prose of each card rewritten where the model's
    answer validates; every other card keeps its rule text."""
    config = repo_facts.config
    jobs: list[tuple[Error, dict[str, Any], Path]] = []
    for error in result.errors:
        facts = card_facts(error, analyses[error.error_id], links[error.error_id], config)
        path = settings.cache_dir / cache_key(error.error_id, facts_hash(facts), settings.model)
        jobs.append((error, facts, path))

    def answer_for(job: tuple[Error, dict[str, Any], Path]) -> Any:
        _, facts, path = job
        hit, answer = _read_cache(path)
        if hit:
            return answer
        answer = ask(settings, facts)
        if answer is not None:
            _write_cache(path, answer)
        return answer

    with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as pool:
        answers = list(pool.map(answer_for, jobs))
    out = dict(analyses)
    author = f"AI-assisted analysis (model {settings.model})"
    for (error, facts, _), answer in zip(jobs, answers, strict=True):
        if answer is None:
            continue
        problem = validate(answer, facts)
        if problem is not None:
            log.warning("%s: LLM answer rejected (%s); rule text kept", error.error_id, problem)
            continue
        out[error.error_id] = replace(
            analyses[error.error_id],
            what_it_means=answer["what_it_means"].strip(),
            trigger=answer["trigger"].strip(),
            situations=tuple(s.strip() for s in answer["situations"]),
            solutions=tuple(s.strip() for s in answer["solutions"]),
            solution_kinds=(),  # the model's words: kinds not known
            author=author,
        )
    return out
