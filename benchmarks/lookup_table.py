"""Write the lookup test table: pastes in the shapes users paste, built from
the real templates of a mined release, each with the error id it must find,
and pastes that must match nothing (errors raised by torch, transformers,
plain Python).

    python benchmarks/lookup_table.py --out OUT --corpus .corpus/sglang \\
        --dest tests/fixtures/lookup_table.json

``OUT`` is a mined v0.5.19 (``miner mine --commit v0.5.19``); the release
repository gives the lines of v0.5.18 for the files that moved in v0.5.19.
Deterministic: templates are chosen in error-id order, one per file, among
errors users cause (audiences ``user-setting``, ``user-input``,
``unsupported``) whose rendered message no other template matches; their
placeholders are filled by the name of the expression (a path, a device, a
size...). The table is data: tests/test_lookup_table.py checks every row
and ``make bench-lookup`` measures precision, recall and latency on it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from miner.lookup import LookupIndex
from miner.model import Error, Site, group_errors
from miner.publish.records import read_sites
from miner.publish.release_index import first_source_line

SP = "/usr/local/lib/python3.12/dist-packages/sglang"
USER = ("user-setting", "user-input", "unsupported")

#: (pattern over the placeholder's expression, value), first match wins.
VALUES: list[tuple[str, str]] = [
    (r"type\(", "<class 'NoneType'>"),
    (r"shape|size\(\)", "torch.Size([4, 1024])"),
    (r"dtype", "torch.bfloat16"),
    (r"device", "cuda:0"),
    (r"path|dir|file", "/models/Qwen3-8B"),
    (r"backend", "flashinfer"),
    (r"model|name|arch", "Qwen3ForCausalLM"),
    (r"mode", "decode"),
    (r"key", "'rope_scaling'"),
    (r"len\(|num|size|count|rank|_tp|dim|id|step|page|batch|token|length|bytes", "16"),
    (r"", "7"),
]


@dataclass(frozen=True)
class Chosen:
    """A template chosen for the table: its error, primary site, rendering."""

    error: Error
    site: Site
    message: str
    code: str

    @property
    def typed(self) -> str:
        return f"{self.error.exception}: {self.message}"

    def frame(self, line_shift: int = 0, path: str | None = None) -> str:
        where = (path or self.site.path).removeprefix("python/sglang/")
        function = self.site.scope.rsplit(".", 1)[-1]
        return (
            f'  File "{SP}/{where}", line {self.site.line + line_shift}, in {function}\n'
            f"    {self.code}\n"
        )


def value_for(expr: str) -> str:
    return next(value for pattern, value in VALUES if re.search(pattern, expr))


def render(error: Error) -> str:
    return "".join(
        p.text if p.expr is None else value_for(p.expr) for p in error.message_parts
    ).strip()


def audiences(out: Path) -> dict[str, str]:
    found = {}
    for line in (out / "analyses.jsonl").read_text("utf-8").splitlines():
        record = json.loads(line)
        found[record["error_id"]] = record["analysis"].get("audience") or ""
    return found


def candidates(out: Path) -> tuple[list[Chosen], LookupIndex, list[Error]]:
    """User-caused errors with one site, a template of at least 40 literal
    characters on one line, rendered so that only their own template matches."""
    errors = group_errors(read_sites(out / "sites.jsonl"))
    audience = audiences(out)
    index = LookupIndex.from_errors(errors)
    chosen = []
    for error in sorted(errors, key=lambda e: e.error_id):
        literal = "".join(p.text or "" for p in error.message_parts)
        if (
            audience.get(error.error_id) not in USER
            or len(error.sites) != 1
            or error.sites[0].kind != "raise"
            or not error.exception
            or error.message_kind not in ("literal", "template")
            or len(literal.replace(" ", "")) < 40
            or "\n" in literal
        ):
            continue
        message = render(error)
        found = index.search(f"{error.exception}: {message}", limit=2)
        if not found or found[0].card.error_id != error.error_id:
            continue
        if len(found) > 1 and found[1].good:
            continue
        chosen.append(Chosen(error, error.sites[0], message, first_source_line(error.sites[0])))
    return chosen, index, errors


def spread(chosen: Sequence[Chosen]) -> Iterator[Chosen]:
    """One template per file, in error-id order."""
    files: set[str] = set()
    for item in chosen:
        if item.site.path not in files:
            files.add(item.site.path)
            yield item


# ---- The shapes: each a function of a chosen template to a paste. ----


def log_before_cut_traceback(c: Chosen) -> str:
    return (
        f"[2025-08-12 08:24:37] Error in request: {c.message}\n"
        "Traceback (most recent call last):\n"
        f'  File "{SP}/srt/entrypoints/http_server.py", line 612, in generate_request\n'
        "    ret = await _global_state.tokenizer_manager.generate_request(obj, request)"
        ".__anext__()\n"
        f'  File "{SP}/srt/managers/tokenizer_manager.py", line 498, in generate_request\n'
    )


def headless_then_block(c: Chosen) -> str:
    return (
        c.frame()
        + f"{c.typed}\n\n"
        + "[2025-08-12 08:24:38 TP0] Scheduler hit an exception: "
        + "Traceback (most recent call last):\n"
        + f'  File "{SP}/srt/managers/scheduler.py", line 3712, in run_scheduler_process\n'
        + "    scheduler.event_loop_normal()\n"
        + f'  File "{SP}/srt/managers/scheduler.py", line 1187, in event_loop_normal\n'
    )


def http_error_body(c: Chosen) -> str:
    body = {
        "object": "error",
        "message": c.message,
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    return json.dumps(body)


def http_error_pretty(c: Chosen) -> str:
    body = {"error": {"object": "error", "message": c.typed, "type": "BadRequestError"}}
    return "HTTP/1.1 400 Bad Request\ncontent-type: application/json\n\n" + json.dumps(
        body, indent=2
    )


def openai_client_error(c: Chosen) -> str:
    body = {"object": "error", "message": c.message, "type": "BadRequestError", "code": 400}
    return f"openai.BadRequestError: Error code: 400 - {body!r}"


def finish_reason(c: Chosen) -> str:
    reply = {
        "id": "4c1f0c1e2b",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None},
                "finish_reason": {"type": "abort", "message": c.message, "status_code": 400},
            }
        ],
    }
    return json.dumps(reply)


def finish_reason_stream(c: Chosen) -> str:
    chunk = {
        "id": "4c1f0c1e2b",
        "choices": [
            {"index": 0, "delta": {}, "finish_reason": {"type": "abort", "message": c.typed}}
        ],
    }
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]"


def json_log_record(c: Chosen) -> str:
    record = {
        "timestamp": "2025-08-12T08:24:37.123Z",
        "level": "ERROR",
        "logger": "sglang.srt.managers.scheduler",
        "message": c.typed,
    }
    return json.dumps(record)


def json_log_traceback(c: Chosen) -> str:
    record = {
        "time": "2025-08-12 08:24:37",
        "level": "ERROR",
        "msg": "Scheduler hit an exception",
        "exc_info": "Traceback (most recent call last):\n" + c.frame() + c.typed,
    }
    return "2025-08-12 08:24:37 ERROR " + json.dumps(record)


def _halves(message: str) -> tuple[str, str]:
    spaces = [m.start() for m in re.finditer(" ", message)]
    cut = min(spaces, key=lambda at: abs(at - len(message) // 2))
    return message[:cut], message[cut + 1 :]


def wrapped_indented(c: Chosen) -> str:
    first, second = _halves(c.message)
    return f"{c.error.exception}: {first}\n    {second}"


def wrapped_in_log(c: Chosen) -> str:
    """Among other log lines: read whole, the wrapped message matches; read
    line by line, each half is only a fragment."""
    first, second = _halves(c.message)
    return (
        "[2025-08-12 08:24:36 TP0] Load weight end. type=Qwen3ForCausalLM, avail mem=12.34 GB\n"
        f"[2025-08-12 08:24:37 TP0] {c.error.exception}: {first}\n"
        f"        {second}\n"
        "[2025-08-12 08:24:37] Received sigquit from a child process. It usually means the child "
        "failed.\n"
    )


PREFIXED: list[Callable[[str], str]] = [
    lambda m: f"2025-08-12T08:24:37.123456789Z stderr F [2025-08-12 08:24:37 TP0] {m}",
    lambda m: f"sglang-router-7d9f8c-x2k sglang {m}",
    lambda m: f"sglang-1  | [2025-08-12 08:24:37 DP0 TP3] {m}",
    lambda m: f"Aug 12 08:24:37 gpu-node-3 python3[4242]: {m}",
    lambda m: f"[rank0]: {m}",
    lambda m: f"| {m}",
    lambda m: f"2025-08-12 08:24:37,123 - sglang.srt.server_args - ERROR - {m}",
    lambda m: f"(SchedulerActor pid=7721, ip=10.0.0.12) [2025-08-12 08:24:37 TP1] {m}",
    lambda m: f"E0812 08:24:37.123456 4242 scheduler.py:187] {m}",
    lambda m: f"ERROR 08-12 08:24:37 [scheduler.py:187] {m}",
]


def indented_traceback(c: Chosen) -> str:
    text = "Traceback (most recent call last):\n" + c.frame() + c.typed
    return "\n".join("    " + line for line in text.splitlines())


def indented_exception_line(c: Chosen) -> str:
    """The frame of another release (its line moved, no source line shown):
    the indented exception line must be read for the message."""
    function = c.site.scope.rsplit(".", 1)[-1]
    where = c.site.path.removeprefix("python/sglang/")
    return (
        "Traceback (most recent call last):\n"
        f'  File "{SP}/{where}", line {c.site.line + 37}, in {function}\n'
        f"    {c.typed}\n"
    )


def classic_traceback(c: Chosen) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "{SP}/srt/managers/scheduler.py", line 3712, in run_scheduler_process\n'
        "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank)\n"
        "                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        + c.frame()
        + c.typed
        + "\n"
    )


def interleaved(c: Chosen) -> str:
    return (
        "[2025-08-12 08:24:37 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'[2025-08-12 08:24:37 TP0]   File "{SP}/srt/managers/scheduler.py", line 3712, in '
        "run_scheduler_process\n"
        "[2025-08-12 08:24:37 TP0]     scheduler = Scheduler(server_args, port_args)\n"
        "[2025-08-12 08:24:37 TP1] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16\n"
        + "".join(f"[2025-08-12 08:24:37 TP0] {line}\n" for line in c.frame().splitlines())
        + f"[2025-08-12 08:24:37 TP0] {c.typed}\n"
    )


def scheduler_words(c: Chosen) -> str:
    return f"[2025-08-12 08:24:37 TP0] Scheduler hit an exception: {c.typed}"


def plain(c: Chosen) -> str:
    return c.typed


def bare(c: Chosen) -> str:
    return c.message


SHAPES: list[tuple[str, str, Callable[[Chosen], str], int]] = [
    ("1", "log-line-before-cut-traceback", log_before_cut_traceback, 8),
    ("1", "headless-traceback-then-block", headless_then_block, 5),
    ("2", "http-error-body", http_error_body, 4),
    ("2", "http-error-body-pretty", http_error_pretty, 3),
    ("2", "openai-client-error-repr", openai_client_error, 3),
    ("2", "finish-reason-abort", finish_reason, 4),
    ("2", "finish-reason-stream", finish_reason_stream, 2),
    ("2", "json-log-record", json_log_record, 4),
    ("2", "json-log-record-traceback", json_log_traceback, 3),
    ("3", "wrapped-indented", wrapped_indented, 5),
    ("3", "wrapped-in-log", wrapped_in_log, 4),
    ("3", "indented-traceback", indented_traceback, 3),
    ("3", "indented-exception-line", indented_exception_line, 3),
    ("0", "classic-traceback", classic_traceback, 5),
    ("0", "interleaved-log-lines", interleaved, 3),
    ("0", "scheduler-words", scheduler_words, 3),
    ("0", "plain-typed", plain, 4),
    ("0", "plain-bare", bare, 3),
]


def prefixed_rows(chosen: Iterator[Chosen]) -> Iterator[dict[str, object]]:
    for number, wrap in enumerate(PREFIXED):
        c = next(chosen)
        yield row("3", f"log-prefix-{number}", wrap(c.typed), c.error)


def row(kind: str, shape: str, paste: str, error: Error | None) -> dict[str, object]:
    site = error.sites[0] if error is not None else None
    return {
        "kind": kind,
        "shape": shape,
        "paste": paste,
        "error_id": error.error_id if error is not None else None,
        "path": site.path if site is not None else None,
        "line": site.line if site is not None else None,
    }


# ---- Kind 4: bare asserts in files that moved, their lines shifted. ----

#: v0.5.19 files that were elsewhere in v0.5.18 (``git diff -M``), and a
#: folder renamed before the releases of the corpus (issue 35's report).
MOVED_V0518 = {
    "python/sglang/kernels/ops/diffusion/sites/bitexact_gate.py": (
        "python/sglang/kernels/ops/diffusion/bitexact_gate.py"
    ),
    "python/sglang/srt/utils/cuda_vmm_utils.py": "python/sglang/srt/cuda_vmm_utils.py",
}
OLD_FOLDER = ("mem_cache/unified_cache/components/", "mem_cache/unified_cache_components/")


def old_line(corpus: Path, path: str, code: str) -> int | None:
    """The line of ``code`` (a first source line) in ``path`` at v0.5.18."""
    shown = subprocess.run(
        ["git", "-C", str(corpus), "show", f"v0.5.18:{path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    for number, line in enumerate(shown.stdout.splitlines(), 1):
        if line.strip() == code:
            return number
    return None


def assert_paste(c: Chosen, path: str, line: int) -> str:
    tail = f": {c.message}" if c.message else ""
    return (
        "[2025-08-12 08:24:37 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{SP}/srt/managers/scheduler.py", line 3712, in run_scheduler_process\n'
        "    scheduler.event_loop_overlap()\n"
        + c.frame(line - c.site.line, path)
        + f"AssertionError{tail}\n"
    )


def unique_asserts(errors: Sequence[Error]) -> list[Chosen]:
    """Asserts whose file name, function and first source line no other site shares."""
    seen: dict[tuple[str, str, str], int] = {}
    asserts = []
    for error in errors:
        for site in error.sites:
            key = (
                site.path.rsplit("/", 1)[-1],
                site.scope.rsplit(".", 1)[-1],
                first_source_line(site),
            )
            seen[key] = seen.get(key, 0) + 1
            if site.kind == "assert" and len(error.sites) == 1:
                asserts.append((key, error, site))
    return [
        Chosen(error, site, render(error) if error.message_parts else "", key[2])
        for key, error, site in sorted(asserts, key=lambda a: a[1].error_id)
        if seen[key] == 1
    ]


def moved_rows(errors: Sequence[Error], corpus: Path) -> Iterator[dict[str, object]]:
    asserts = unique_asserts(errors)
    for c in asserts:
        old = MOVED_V0518.get(c.site.path)
        line = old_line(corpus, old, c.code) if old else None
        if old and line:
            yield row("4", "moved-file-v0.5.18", assert_paste(c, old, line), c.error)
    renamed = [c for c in asserts if OLD_FOLDER[0] in c.site.path and not c.message]
    for shift, c in zip((23, -41, 7, 112, -3, 58), renamed[:6], strict=False):
        path = c.site.path.replace(*OLD_FOLDER)
        yield row(
            "4", "moved-folder-bare-assert", assert_paste(c, path, c.site.line + shift), c.error
        )


# ---- Pastes that must match nothing. ----

TORCH = "/usr/local/lib/python3.12/dist-packages/torch"
TRANSFORMERS = "/usr/local/lib/python3.12/dist-packages/transformers"
NOTHING = [
    f"""Traceback (most recent call last):
  File "{SP}/srt/model_executor/model_runner.py", line 512, in load_model
    self.model = get_model(model_config=self.model_config)
  File "{TORCH}/nn/modules/module.py", line 1355, in to
    return self._apply(convert)
  File "{TORCH}/nn/modules/module.py", line 942, in _apply
    param_applied = fn(param)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total \
capacity of 79.15 GiB of which 1.02 GiB is free.""",
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:3356, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
    "NCCL version 2.26.2",
    f"""Traceback (most recent call last):
  File "{TRANSFORMERS}/utils/hub.py", line 479, in cached_files
    hf_hub_download(
OSError: meta-llama/Llama-3.1-8B-Instructx is not a local folder and is not a valid model \
identifier listed on 'https://huggingface.co/models'
If this is a private repository, make sure to pass a token having permission to this repo \
either by logging in with `hf auth login` or by passing `token=<your_token>`""",
    "ValueError: Tokenizer class Qwen2TokenizerFast does not exist or is not currently imported.",
    f"""Traceback (most recent call last):
  File "{TRANSFORMERS}/models/auto/configuration_auto.py", line 1271, in from_pretrained
    config_class = CONFIG_MAPPING[config_dict["model_type"]]
  File "{TRANSFORMERS}/models/auto/configuration_auto.py", line 966, in __getitem__
    raise KeyError(key)
KeyError: 'qwen3_next'""",
    "KeyError: 'input_ids'",
    "ZeroDivisionError: division by zero",
    "TypeError: 'NoneType' object is not subscriptable",
    f"""Traceback (most recent call last):
  File "{SP}/srt/utils/common.py", line 88, in wrapper
    return func(*args, **kwargs)
  [Previous line repeated 996 more times]
RecursionError: maximum recursion depth exceeded""",
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    "ModuleNotFoundError: No module named 'sgl_kernel'",
    "RuntimeError: CUDA error: device-side assert triggered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key "
    "provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.',"
    " 'type': 'invalid_request_error', 'param': None, 'code': 'invalid_api_key'}}",
    '{"detail":"Not Found"}',
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
    "network address. port: 30000, useIpv6: false, code: -98, name: EADDRINUSE, message: address "
    "already in use",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, "
    "Hardware limit: 232448. Reducing block sizes or `num_stages` may help.",
    """Traceback (most recent call last):
  File "/usr/lib/python3.12/asyncio/tasks.py", line 520, in wait_for
    return await fut
asyncio.exceptions.CancelledError""",
    'data: {"error": {"message": "The model `qwen-max` does not exist.", "type": '
    '"NotFoundError", "code": 404}}',
]


def fragment_rows(errors: Sequence[Error]) -> Iterator[dict[str, object]]:
    """Hand-wrapped messages no release raises, their second line a piece of
    an unrelated message of the release: no card may be good."""
    yield row(
        "3",
        "wrapped-fragment-of-another",
        "RuntimeError: FlashInfer TRTLLM-gen attention kernels were built for\n"
        "    Blackwell GPUs (SM100).",
        None,
    )
    literals = sorted(
        {
            (p.text or "").strip()
            for e in errors
            for p in e.message_parts
            if p.expr is None and 24 <= len((p.text or "").strip()) <= 48
        }
    )
    for literal in literals[100:400:150]:
        yield row(
            "3",
            "wrapped-fragment-of-another",
            f"ValueError: the engine stopped while replaying the request queue;\n    {literal}",
            None,
        )


def build(out: Path, corpus: Path) -> dict[str, object]:
    chosen, _, errors = candidates(out)
    pool = spread(chosen)
    rows = []
    for kind, shape, make, count in SHAPES:
        for _ in range(count):
            c = next(pool)
            rows.append(row(kind, shape, make(c), c.error))
    rows += list(prefixed_rows(pool))
    rows += list(moved_rows(errors, corpus))
    rows += list(fragment_rows(errors))
    rows += [row("none", "raised-elsewhere", paste, None) for paste in NOTHING]
    return {
        "release": "v0.5.19",
        "built_by": "benchmarks/lookup_table.py",
        "pastes": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="a mined v0.5.19")
    parser.add_argument("--corpus", type=Path, default=Path(".corpus/sglang"))
    parser.add_argument("--dest", type=Path, default=Path("tests/fixtures/lookup_table.json"))
    args = parser.parse_args(argv)
    table = build(args.out, args.corpus)
    args.dest.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", "utf-8")
    rows = table["pastes"]
    assert isinstance(rows, list)
    print(
        f"{args.dest}: {len(rows)} pastes, {sum(r['error_id'] is None for r in rows)} match nothing"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
