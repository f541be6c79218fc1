"""Golden cards of SGLang v0.5.19 (issue 12, item 6), checked by tests/test_golden_cards.py.

Facts a reviewer verified in the source of the tag (``git -C <corpus> show
v0.5.19:<path>``), written as checks on the rendered card (``errors/<id>.md``)
and its JSON record (``api/errors/<id>.json``). One entry per card:

- ``id``, ``subsystem``, ``audience``: the card's error id and audience (asserted;
  an audience the card gets wrong is left out here and asserted by a defect);
- ``message``: the message template, exactly as mined; ``site``: ``path:line``
  of the primary site. The card is found by message + site, then its id is
  compared; ``also_sites``: the other sites of a multi-site error;
- ``verified``: what the reviewer read and where (path:line), to re-check;
- ``facts``: per section, regexes that must match on a correct card;
- ``absent``: per section, regexes that must not match (refuted fixes, wrong names);
- ``defects``: what the current card gets wrong, in the same shape (``must`` /
  ``must_not`` per section, optional ``audience``) with the precise ``reason``;
  their tests are ``xfail(strict=True)``, so fixing the card asks for the entry's
  defect to be turned into a fact.

Sections: ``what`` (What it means), ``when`` (When it happens, with its common
situations), ``solutions``, ``example`` (both code blocks of Example fix),
``example_before``, ``example_after``. Each regex is searched in the Markdown
section (HTML entities decoded) and in the same field of the JSON analysis;
both must agree. Checks are per fact, not whole sentences: rewording keeps them
passing, a wrong flag, value or fix fails them.

Audiences are those of the origins classifier, which ``miner mine`` runs by
default: five errors first verified as ``user-setting`` are ``unsupported``
(each says a combination is "not supported" and is reached through the flags
it names: a defensible label of the same full card), and the image-placeholder
mismatch of ``base_processor.py:1665`` left the table: its only call
(``:1767``) is in a ``try`` whose ``except Exception`` logs a warning and falls
back (``:1774-1777``), so no user meets it as an error
(``tests/test_origins_sglang.py`` asserts its ``logged`` fact). A multimodal
request error (``dots_note_omni.py:454``) took its place.
"""

from __future__ import annotations

import re
from typing import Any

# Regexes for the common facts about a flag, tolerant of rewording (one line each).


def on(flag: str) -> str:
    """``flag`` is stated as on / set / given."""
    return rf"`{flag}` (is |are )?(on|set|given|enabled|passed|true)\b"


def off(flag: str) -> str:
    """``flag`` is stated as off / not given / unset."""
    return rf"`{flag}` (is |are )?(off|not (given|set|passed)|unset|disabled|false)\b"


def is_(flag: str, value: str) -> str:
    """``flag`` is stated to have ``value``."""
    v = re.escape(value)
    return rf"`{flag}`\s+(is|=|equals|set to)\s+`{v}`|`{flag}[ =]{v}`"


def pass_(flag: str) -> str:
    """A fix that passes ``flag``."""
    return rf"(?i)\b(pass|add|give|set|use)\s+`{flag}`"


def drop(flag: str) -> str:
    """A fix that drops ``flag``."""
    return (
        rf"(?i)(\b(drop|remove|omit|unset|without)\s+`{flag}`|\bleave\s+`{flag}`\s+(out|unset|off))"
    )


def set_(flag: str, value: str) -> str:
    """A fix that sets ``flag`` to ``value``."""
    v = re.escape(value)
    return rf"(?i)\b(set|pass|use|give)\b[^\n]*`{flag}(`\s*(to\s+)?`| |=){v}\b"


CARDS: tuple[dict[str, Any], ...] = (
    # ------------------------------------------------------------ scheduler
    dict(
        id="87bdadffcb33d858",
        subsystem="scheduler",
        audience=None,
        message="Unknown schedule_policy: {policy=}",
        site="python/sglang/srt/managers/schedule_policy.py:322",
        verified=(
            "schedule_policy.py:312-322 raises when the policy is in neither CacheAwarePolicy "
            "(lpm, dfs-weight; :203) nor CacheAgnosticPolicy (fcfs, lof, random, routing-key; "
            ":210); server_args.py:745-759 --schedule-policy accepts `priority` too; "
            "scheduler.py:450 reads it and scheduler.py:1291 passes it in; so `--schedule-policy "
            "priority` raises"
        ),
        facts={
            "when": (
                r"`SchedulePolicy\._validate_and_adjust_policy`",
                r"ValueError",
            ),
        },
        defects=(
            dict(
                audience="user-setting",
                reason=(
                    "filed internal: the origins stop at the try body that builds "
                    "CacheAwarePolicy(policy) (schedule_policy.py:305-318), so the card page is "
                    "missing; --schedule-policy priority raises (server_args.py:745-759)"
                ),
            ),
            dict(
                reason=(
                    "When/Solutions never name --schedule-policy: the value is "
                    "get_schedule().schedule_policy (scheduler.py:450), and `priority`, one of "
                    "its argparse choices (server_args.py:745-759), is in neither policy enum "
                    "(schedule_policy.py:203-215), so `--schedule-policy priority` raises; a "
                    "correct card names the flag, that value and the accepted ones"
                ),
                must={
                    "when": (
                        r"`--schedule-policy`",
                        r"`priority`",
                    ),
                    "solutions": (
                        r"`--schedule-policy`",
                        r"`fcfs`",
                    ),
                },
            ),
        ),
    ),
    dict(
        id="9216ee46139c5039",
        subsystem="scheduler",
        audience="unsupported",
        message=(
            "[weight_cache] {op} of model weights is not supported while the weight cache is "
            "active (--weight-cache-mode {mode}): the weights are shared with the daemon via CUDA "
            "IPC, so freeing them would corrupt the daemon's master copy and every co-attached "
            "engine. Restart with --weight-cache-mode off to use this operation."
        ),
        site="python/sglang/srt/managers/scheduler_components/weight_updater.py:203",
        verified=(
            "weight_updater.py:201-203 raises when server_args.weight_cache_mode != 'off'; "
            "server_args.py:3615-3628 --weight-cache-mode takes off/daemon/client, default off; "
            "restarting with off avoids it"
        ),
        facts={
            "when": (
                r"`--weight-cache-mode`",
                r"weight_updater\.py:201|line 201|line 202",
                r"\boff\b",
            ),
            "solutions": (r"`--weight-cache-mode`[^\n]*\boff\b",),
            "example_after": (r"--weight-cache-mode off",),
        },
        defects=(
            dict(
                reason=(
                    "Example fix 'before' is a bare launch command, which does not raise: the "
                    "error needs --weight-cache-mode daemon or client (weight_updater.py:201-202)"
                ),
                must={
                    "example_before": (r"--weight-cache-mode (daemon|client)",),
                },
            ),
        ),
    ),
    dict(
        id="4eedc641cf9c75cf",
        subsystem="scheduler",
        audience="unsupported",
        message="truncation_align_size is not supported for dllm prefill",
        site="python/sglang/srt/managers/schedule_policy.py:1319",
        verified=(
            "schedule_policy.py:1315-1321 asserts truncation_align_size is None for dLLM prefill; "
            "the scheduler passes self.truncation_align_size (scheduler.py:3708), which is None "
            "unless --enable-deterministic-inference is on, then "
            "SGLANG_FLASHINFER_PREFILL_SPLIT_TILE_SIZE / "
            "SGLANG_TRITON_PREFILL_TRUNCATION_ALIGN_SIZE (default 4096) for the flashinfer/triton "
            "prefill backend (scheduler.py:1597-1612)"
        ),
        facts={
            "when": (
                r"`truncation_align_size` is not `None`",
                r"`self\.dllm_config` is not `None`",
            ),
        },
        defects=(
            dict(
                reason=(
                    "truncation_align_size is set only when --enable-deterministic-inference is "
                    "on with the flashinfer or triton prefill backend (scheduler.py:1597-1612, "
                    "passed at scheduler.py:3708); the card never names that setting, so no "
                    "Solution says to drop it"
                ),
                must={
                    "when": (r"`--enable-deterministic-inference`",),
                    "solutions": (r"`--enable-deterministic-inference`",),
                },
            ),
        ),
    ),
    # ------------------------------------------------------------ memory pool
    dict(
        id="715dca07de164489",
        subsystem="memory pool",
        audience="user-setting",
        message=(
            "alloc_req_slots runs out of memory. Please set a smaller number for "
            "`--max-running-requests`. {req_to_token_pool.available_size()=}, {num_reqs=}, "
        ),
        site="python/sglang/srt/mem_cache/allocation.py:265",
        verified=(
            "allocation.py:263-265 raises when req_to_token_pool.alloc(reqs) returns None; the "
            "message's remedy is a smaller --max-running-requests (server_args.py:691)"
        ),
        facts={
            "when": (
                r"`req_pool_indices` is `None`",
                r"`--max-running-requests`",
            ),
            "solutions": (
                r"`--max-running-requests`",
                r"(?i)smaller",
            ),
        },
    ),
    dict(
        id="e0e7bb735544ffe4",
        subsystem="memory pool",
        audience="user-setting",
        message=(
            "--radix-cache-backend={name!r} is not registered. Registered backends: "
            "{registered_radix_cache_backends()}. External backends must call "
            "register_radix_cache_backend(...) at import time."
        ),
        site="python/sglang/srt/mem_cache/registry.py:205",
        verified=(
            "registry.py:201-205: name = get_memory().radix_cache_backend (--radix-cache-backend, "
            "default None, server_args.py:1706-1710); raises when it is set and "
            "get_radix_cache_factory(name) is None; leaving it unset or registering the backend "
            "avoids it"
        ),
        facts={
            "what": (r"`--radix-cache-backend`",),
            "when": (
                r"`--radix-cache-backend`",
                r"`factory` is `None`",
            ),
            "solutions": (
                r"`--radix-cache-backend`",
                r"register_radix_cache_backend",
            ),
        },
    ),
    dict(
        id="8865a830b5941226",
        subsystem="memory pool",
        audience="unsupported",
        message="Host-pool retraction does not support Mamba models.",
        site="python/sglang/srt/mem_cache/registry.py:154",
        verified=(
            "registry.py:152-154 raises for host_pool with ctx.is_hybrid_ssm; "
            "--disaggregation-decode-retraction-backup takes cpu_tensor/host_pool, default None "
            "(server_args.py:3211-3220); when omitted kv_cache_builder.py:145-160 picks host_pool "
            "only for models without SSM state (comment at :153-154), so omitting it or "
            "cpu_tensor avoids the raise"
        ),
        facts={
            "when": (
                is_("--disaggregation-decode-retraction-backup", "host_pool"),
                r"`ctx\.is_hybrid_ssm` is true",
            ),
            "solutions": (
                set_("--disaggregation-decode-retraction-backup", "cpu_tensor"),
                r"(?i)leave `--disaggregation-decode-retraction-backup` out",
                # left out, it resolves to cpu_tensor for a model with SSM state: re-verified
                # kv_cache_builder.py:155-160 (supports_host_pool needs not uses_ssm_state),
                # :166-178 (else "cpu_tensor"), :180 (the resolved field)
                (
                    r"(?i)leave `--disaggregation-decode-retraction-backup` out"
                    r"[^\n]*`cpu_tensor`"
                ),
                r"kv_cache_builder\.py:1[5-8]\d",
            ),
            "what": (
                # the why: the comment at kv_cache_builder.py:153-154 (re-verified: "Host-pool
                # retraction transfers full and sliding-window components only, so a model
                # with recurrent state stays on cpu_tensor"), cited where the option is resolved
                r"kv_cache_builder\.py:15[34]",
                r"recurrent state",
            ),
            "example_before": (r"--disaggregation-decode-retraction-backup host_pool",),
            "example_after": (r"--disaggregation-decode-retraction-backup cpu_tensor",),
        },
        absent={
            "solutions": (r"--disaggregation-decode-retraction-backup host_pool",),
        },
    ),
    dict(
        id="a56ddfd77b7a8221",
        subsystem="memory pool",
        audience="unsupported",
        message="MLX auxiliary-state radix cache does not support enable_mamba_extra_buffer yet.",
        site="python/sglang/srt/hardware_backend/mlx/kv_cache/auxiliary_state.py:334",
        verified=(
            "auxiliary_state.py:333-334 raises when params.enable_mamba_extra_buffer; "
            "model_override_base.py:260-270 defines it as disable_radix_cache False and "
            "--mamba-radix-cache-strategy in extra_buffer/extra_buffer_lazy; overrides.py:585-593 "
            "turns the default `auto` into extra_buffer under overlap or paging, so only "
            "no_buffer or --disable-radix-cache is a fix"
        ),
        facts={
            "when": (
                (
                    r"`--mamba-radix-cache-strategy` is one of `extra_buffer` "
                    r"or `extra_buffer_lazy`"
                ),
                off("--disable-radix-cache"),
            ),
            "solutions": (
                set_("--mamba-radix-cache-strategy", "no_buffer"),
                r"[Pp]ass `--disable-radix-cache`",
                r"`auto`",
                r"overrides\.py:591",
            ),
            "example_after": (r"--mamba-radix-cache-strategy no_buffer",),
        },
        absent={
            "solutions": (
                (
                    r"(?i)(drop|omit|leave out|remove) `--mamba-radix-cache-strategy`"
                    r"[^\n.]*to use its default"
                ),
            ),
        },
    ),
    dict(
        id="a76034867a809d39",
        subsystem="memory pool",
        audience="unsupported",
        message="Host-pool retraction does not support pure-SWA models.",
        site="python/sglang/srt/mem_cache/registry.py:156",
        verified=(
            "registry.py:152-156: with host_pool, a Mamba model raises first (:153-154), then a "
            "hybrid-SWA model with no full-attention tokens (full_tokens_per_layer == 0) raises; "
            "when the option is omitted kv_cache_builder.py:145-180 picks host_pool only for an "
            "SWAKVPool with full_tokens_per_layer > 0, else cpu_tensor, so omitting it works too"
        ),
        facts={
            "when": (
                is_("--disaggregation-decode-retraction-backup", "host_pool"),
                r"`ctx\.is_hybrid_ssm` is false",
                r"`ctx\.is_hybrid_swa` is true",
                r"`ctx\.full_tokens_per_layer == 0`",
            ),
            "solutions": (
                set_("--disaggregation-decode-retraction-backup", "cpu_tensor"),
                r"(?i)leave `--disaggregation-decode-retraction-backup` out",
            ),
            "example_after": (r"--disaggregation-decode-retraction-backup cpu_tensor",),
        },
        absent={
            "solutions": (r"--disaggregation-decode-retraction-backup host_pool",),
        },
        defects=(
            dict(
                reason=(
                    "Solution 1 says 'Leaving it out may not help: it is then resolved ... to "
                    "host_pool when its conditions hold and cpu_tensor otherwise', but one of "
                    "those conditions is `full_tokens_per_layer > 0` for an SWAKVPool "
                    "(supports_host_pool, mem_cache/kv_cache_builder.py:155-160), the negation of "
                    "this error's `ctx.full_tokens_per_layer == 0` (registry.py:155): left out, "
                    "it resolves to cpu_tensor for a pure-SWA model, as the Mamba card "
                    "8865a830b5941226 concludes for its case"
                ),
                must_not={
                    "solutions": (
                        r"(?i)leave `--disaggregation-decode-retraction-backup` out[^\n]*"
                        r"may not help",
                    ),
                },
            ),
        ),
    ),
    # ------------------------------------------------------------ server args
    dict(
        id="3a56f4aeee0cf58c",
        subsystem="server args",
        audience="user-setting",
        message="--swa-full-tokens-ratio should be in range (0, 1.0].",
        site="python/sglang/srt/arg_groups/kv_cache_hook.py:193",
        verified=(
            "kv_cache_hook.py:192-193 raises unless 0 < resolved swa_full_tokens_ratio <= 1.0 "
            "(the comment at :189-191 says model branches may reset it); --swa-full-tokens-ratio "
            "default 0.8 (server_args.py:818-830)"
        ),
        facts={
            "when": (
                r"`--swa-full-tokens-ratio`",
                r"0\.8",
                r"swa_full_tokens_ratio <= 1\.0",
                r"is not `host_pool` \(so it is `cpu_tensor` or not given\)",
            ),
            "what": (
                r"declare a reset \(e\.g\. Step3p forces 1\.0 under hierarchical cache\) that "
                r"supersedes the user input",
            ),
            "solutions": (
                r"`--swa-full-tokens-ratio`",
                # the message's range, whole (re-verified kv_cache_hook.py:193)
                r"`--swa-full-tokens-ratio` a value that is in range \(0, 1\.0\]",
            ),
        },
        absent={
            "solutions": (r"in range \(0, 1,",),
            # the comment at kv_cache_hook.py:189-191 is not cut after '(e.g.'
            "what": (r"declare a reset \(e\.g\.\"",),
            # Optional[str] with default None ('If omitted, the backend is
            # inferred', server_args.py:3211-3220), inferred only later in
            # resolve_decode_retraction_backup (mem_cache/kv_cache_builder.py:146-180):
            # at kv_cache_hook.py:144 'not host_pool' is also the unset value
            "when": (r"\(so it is `cpu_tensor`\)",),
        },
    ),
    dict(
        id="780f0537a0165564",
        subsystem="server args",
        audience="user-setting",
        message="Hierarchical sparse attention currently requires --disable-radix-cache.",
        site="python/sglang/srt/arg_groups/hisparse_hook.py:99",
        verified=(
            "hisparse_hook.py:83-84 returns unless --enable-hisparse; :94 asserts a DSA or "
            "DeepSeek V4 model; :99-101 asserts --disable-radix-cache (server_args.py:854)"
        ),
        facts={
            "when": (
                on("--enable-hisparse"),
                off("--disable-radix-cache"),
                r"is_deepseek_dsa",
            ),
            "solutions": (
                pass_("--disable-radix-cache"),
                drop("--enable-hisparse"),
            ),
            # the fix the message names (hisparse_hook.py:99-101), absent before, given after;
            # the before shows the launch that fails: validate_hisparse returns at
            # hisparse_hook.py:83-84 unless --enable-hisparse is on
            "example_after": (r"--enable-hisparse --disable-radix-cache",),
            "example_before": (r"--enable-hisparse",),
        },
        absent={
            "example_before": (r"--disable-radix-cache",),
        },
    ),
    dict(
        id="4c890d8a54aee096",
        subsystem="server args",
        audience="user-setting",
        message=(
            "--prefill-only-disable-kv-cache requires --disable-radix-cache because the radix "
            "cache indexes KV pool slots that no longer hold real data."
        ),
        site="python/sglang/srt/arg_groups/kv_cache_hook.py:441",
        verified=(
            "kv_cache_hook.py:402 returns unless --prefill-only-disable-kv-cache; raises earlier "
            "without --is-embedding (:409), with nvfp4/fp4_mx_block16 (:415) or mxfp8 (:421) KV, "
            "or --chunked-prefill-size != -1 (:434); :440-441 raises without "
            "--disable-radix-cache (store_true)"
        ),
        facts={
            "when": (
                on("--prefill-only-disable-kv-cache"),
                on("--is-embedding"),
                is_("--chunked-prefill-size", "-1"),
                off("--disable-radix-cache"),
            ),
            "solutions": (
                pass_("--disable-radix-cache"),
                drop("--prefill-only-disable-kv-cache"),
            ),
        },
        absent={
            # the message's next word is no value of the store_true flag (kv_cache_hook.py:441)
            "solutions": (r"`--disable-radix-cache because`",),
        },
    ),
    dict(
        id="cf88a33ee9b13c23",
        subsystem="server args",
        # "not yet supported" with the flag it names as the way out (audience._unsupported_advice)
        audience="unsupported",
        message=(
            "--enable-linear-replayssm requires --mamba-radix-cache-strategy no_buffer (the "
            "default); the extra_buffer ping-pong donation path is not yet supported (follow-up). "
            "Got --mamba-radix-cache-strategy={cfg.mamba_radix_cache_strategy!r}."
        ),
        site="python/sglang/srt/arg_groups/attention_hook.py:351",
        verified=(
            "attention_hook.py:342-351 raises with --enable-linear-replayssm when "
            "mamba_extra_buffer_of(resolved_view(...)), i.e. --disable-radix-cache off and "
            "--mamba-radix-cache-strategy in extra_buffer/extra_buffer_lazy "
            "(model_override_base.py:260-270); the message's 'no_buffer (the default)' is not the "
            "default: the default is auto (server_args.py:2621), which overrides.py:585-593 may "
            "resolve to extra_buffer"
        ),
        facts={
            "when": (on("--enable-linear-replayssm"),),
            "solutions": (
                r"`--mamba-radix-cache-strategy no_buffer`",
                drop("--enable-linear-replayssm"),
            ),
        },
        absent={
            "solutions": (r"(?i)(drop|omit|leave out|remove) `--mamba-radix-cache-strategy`",),
        },
        defects=(
            dict(
                reason=(
                    "the guard mamba_extra_buffer_of(resolved_view(server_args)) "
                    "(attention_hook.py:350) is left as a call: it is --disable-radix-cache off "
                    "and --mamba-radix-cache-strategy extra_buffer/extra_buffer_lazy "
                    "(model_override_base.py:260-270), and --disable-radix-cache, which avoids "
                    "it, is not offered"
                ),
                must={
                    "when": (
                        (
                            r"`--mamba-radix-cache-strategy` is one of `extra_buffer` "
                            r"or `extra_buffer_lazy`"
                        ),
                        r"`--disable-radix-cache`",
                    ),
                    "solutions": (r"`--disable-radix-cache`",),
                },
            ),
            dict(
                reason=(
                    "What it means quotes a fragment that starts inside a parenthesis of the "
                    "first comment paragraph ('the COW copy-into-slot path resets the ring "
                    "cursor) -- so the --disable-radix-cache requirement is dropped.', "
                    "attention_hook.py:330-334): that paragraph is about the radix cache, not "
                    "this check; the comment for the raise is the next paragraph (:336-341: the "
                    "extra_buffer strategy's ping-pong donation does not reset the ReplaySSM "
                    "ring cursor, 'for now require no_buffer')"
                ),
                must={
                    "what": (r"require no_buffer|ping-pong slot swap",),
                },
                must_not={
                    "what": (r"\"the COW copy-into-slot path resets the ring cursor\)",),
                },
            ),
        ),
    ),
    dict(
        id="0c9abf9391e7da45",
        subsystem="server args",
        audience="user-setting",
        message=(
            "--disaggregation-decode-retraction-backup=host_pool requires "
            "--disable-priority-preemption when priority scheduling is enabled."
        ),
        site="python/sglang/srt/arg_groups/kv_cache_hook.py:162",
        verified=(
            "kv_cache_hook.py:144-156 raise first for host_pool off a decode server or with "
            "--dcp-size > 1; :157-162 raise for host_pool with --enable-priority-scheduling and "
            "without --disable-priority-preemption (both store_true)"
        ),
        facts={
            "when": (
                is_("--disaggregation-decode-retraction-backup", "host_pool"),
                is_("--disaggregation-mode", "decode"),
                on("--enable-priority-scheduling"),
                off("--disable-priority-preemption"),
            ),
            "solutions": (
                pass_("--disable-priority-preemption"),
                drop("--enable-priority-scheduling"),
            ),
        },
        absent={
            # the message's next word is no value of the store_true flag (kv_cache_hook.py:162)
            "solutions": (r"`--disable-priority-preemption when`",),
        },
    ),
    # ------------------------------------------------------------ disaggregation
    dict(
        id="1a8893b07b34203d",
        subsystem="disaggregation",
        audience="unsupported",
        message="Prefill server does not support 'fake' as the transfer backend",
        site="python/sglang/srt/arg_groups/pd_disaggregation_hook.py:132",
        verified=(
            "pd_disaggregation_hook.py:131-134 asserts --disaggregation-transfer-backend != fake "
            "on --disaggregation-mode prefill; the backend defaults to mooncake "
            "(server_args.py:3183-3190)"
        ),
        facts={
            "when": (
                is_("--disaggregation-mode", "prefill"),
                is_("--disaggregation-transfer-backend", "fake"),
            ),
            "solutions": (
                r"`--disaggregation-transfer-backend` to another of its choices[^\n]*`mooncake`",
            ),
            # re-verified pd_disaggregation_hook.py:131-134: the backend is the fix on a
            # prefill server
            "example_before": (r"--disaggregation-transfer-backend fake",),
            "example_after": (r"--disaggregation-transfer-backend (mooncake|nixl)",),
        },
        absent={
            "example_after": (r"--disaggregation-mode decode",),
        },
    ),
    dict(
        id="940466c845cee65c",
        subsystem="disaggregation",
        audience="user-setting",
        message="Cannot set --encoder-only and --language-only together",
        site="python/sglang/srt/arg_groups/pd_disaggregation_hook.py:201",
        verified=(
            "pd_disaggregation_hook.py:196-201: after the --enable-prefix-mm-cache check, raises "
            "when --encoder-only and --language-only (both store_true) are set"
        ),
        facts={
            "when": (
                on("--encoder-only"),
                on("--language-only"),
            ),
            "solutions": (
                drop("--language-only"),
                r"`--encoder-only`",
            ),
        },
    ),
    dict(
        id="91136e9ad6ba7d31",
        subsystem="disaggregation",
        audience="user-setting",
        message="--enable-prefix-mm-cache requires --encoder-only to be enabled",
        site="python/sglang/srt/arg_groups/pd_disaggregation_hook.py:197",
        verified=(
            "pd_disaggregation_hook.py:196-197 raises with --enable-prefix-mm-cache (default "
            "False, server_args.py:2842-2846) and without --encoder-only"
        ),
        facts={
            "when": (
                on("--enable-prefix-mm-cache"),
                off("--encoder-only"),
            ),
            "solutions": (
                pass_("--encoder-only"),
                drop("--enable-prefix-mm-cache"),
            ),
        },
        absent={
            # the message's next word is no value of the store_true flag
            # (pd_disaggregation_hook.py:197)
            "solutions": (r"`--encoder-only to`",),
        },
    ),
    # ------------------------------------------------------------ speculative decoding
    dict(
        id="a79b4dee208b2110",
        subsystem="speculative decoding",
        audience="user-setting",
        message="--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.",
        site="python/sglang/srt/arg_groups/speculative_hook.py:757",
        verified=(
            "speculative_hook.py:745-757: with --speculative-use-rejection-sampling, a non "
            "EAGLE/EAGLE3 algorithm raises first (:750, NEXTN resolved to EAGLE), then "
            "--speculative-eagle-topk != 1 raises; topk is an int"
        ),
        facts={
            "when": (
                on("--speculative-use-rejection-sampling"),
                r"`--speculative-eagle-topk` is not `1`",
                r"`--speculative-algorithm` is one of `EAGLE` or `EAGLE3`",
            ),
            "solutions": (
                set_("--speculative-eagle-topk", "1"),
                drop("--speculative-use-rejection-sampling"),
            ),
        },
        absent={
            # the message's full stop is not part of the int value (speculative_hook.py:757)
            "solutions": (r"`--speculative-eagle-topk 1\.`", r"`1\.`"),
        },
    ),
    dict(
        id="c4c164febb7b17ed",
        subsystem="speculative decoding",
        audience="user-setting",
        message="DFLASH speculative decoding requires setting --speculative-draft-model-path.",
        site="python/sglang/srt/arg_groups/speculative_hook.py:206",
        verified=(
            "speculative_hook.py:190-206: non cuda/npu device, dp attention and pp_size != 1 "
            "raise first; then --speculative-draft-model-path None raises"
        ),
        facts={
            "when": (
                off("--speculative-draft-model-path"),
                off("--enable-dp-attention"),
            ),
            "solutions": (pass_("--speculative-draft-model-path"),),
        },
        absent={
            # cfg.device.startswith("cuda") (speculative_hook.py:190) rendered without a typo
            "when": (r"startss",),
        },
    ),
    dict(
        id="2e0f06c02b720ba6",
        subsystem="speculative decoding",
        audience="unsupported",
        message="trtllm_mha backend only supports topk = 1 for speculative decoding.",
        site="python/sglang/srt/arg_groups/speculative_hook.py:741",
        verified=(
            "speculative_hook.py:739-741 raises when trtllm_mha is the prefill or decode backend "
            "and speculative_eagle_topk > 1; attention_backends_of "
            "(model_override_base.py:164-178) is --prefill-attention-backend / "
            "--decode-attention-backend falling back to --attention-backend"
        ),
        facts={
            "when": (
                r"`--speculative-eagle-topk`",
                r"trtllm_mha",
            ),
        },
        defects=(
            dict(
                reason=(
                    'the guard \'"trtllm_mha" in '
                    "attention_backends_of(resolved_view(server_args))' (speculative_hook.py:739) "
                    "is --attention-backend (or its prefill/decode split) set to trtllm_mha "
                    "(model_override_base.py:164-178); the card names no attention flag and "
                    "Solutions offer no flag value (--speculative-eagle-topk 1 or another "
                    "backend)"
                ),
                must={
                    "when": (r"`--(prefill-|decode-)?attention-backend`",),
                    "solutions": (r"`--speculative-eagle-topk`[^\n]*`1`",),
                },
            ),
        ),
    ),
    # ------------------------------------------------------------ quantization
    dict(
        id="fdd13ee749899312",
        subsystem="quantization",
        audience="user-setting",
        message="aiter is required when SGLANG_USE_AITER is set to True",
        site="python/sglang/kernels/ops/quantization/fp8_kernel.py:85",
        also_sites=(
            "python/sglang/srt/layers/moe/moe_runner/triton_utils/fused_moe.py:72",
            "python/sglang/srt/layers/moe/topk.py:210",
        ),
        verified=(
            "fp8_kernel.py:75-85 raises on HIP when _use_aiter and `from aiter import ...` fails; "
            "_use_aiter = SGLANG_USE_AITER and _is_hip (fp8_kernel.py:51, topk.py:134, "
            "fused_moe.py:54); SGLANG_USE_AITER default False (environ.py:805); same message at "
            "fused_moe.py:72 (under `elif _is_hip`) and topk.py:210"
        ),
        facts={
            "when": (
                r"`SGLANG_USE_AITER`",
                r"`_is_hip` is true",
                r"fused_moe\.py:72",
                r"topk\.py:210",
                r"environ\.py:805",
            ),
            "solutions": (
                r"`SGLANG_USE_AITER`",
                r"(?i)install[^\n]*`aiter`",
            ),
        },
    ),
    dict(
        id="0ffb0070c6db7101",
        subsystem="quantization",
        audience="user-setting",
        message=(
            "--kv-cache-dtype=mxfp4 is reserved for true MXFP4 block-size-32 semantics. Use "
            "--kv-cache-dtype=fp4_mx_block16 for the current block-size-16 FP4 KV recipe."
        ),
        site="python/sglang/srt/layers/quantization/fp4_kv_cache_quant_method.py:820",
        verified=(
            "fp4_kv_cache_quant_method.py:803-820 raises for the string 'mxfp4'; --kv-cache-dtype "
            "choices (server_args.py:604-614) do not include mxfp4, so argparse refuses it on the "
            "command line: the value reaches here only through the Python API (ServerArgs / "
            "Engine kv_cache_dtype='mxfp4'); fp4_mx_block16 is a choice"
        ),
        facts={
            "when": (
                r"`--kv-cache-dtype`",
                r"mxfp4",
            ),
            "solutions": (
                r"`--kv-cache-dtype=fp4_mx_block16`|`--kv-cache-dtype` to `fp4_mx_block16`",
                # re-verified: mxfp4 is not among the choices (server_args.py:604-614)
                r"command line does not accept `mxfp4`",
            ),
            "example_after": (r"--kv-cache-dtype fp4_mx_block16",),
        },
        absent={
            # argparse refuses mxfp4 (not among the choices, server_args.py:604-614)
            "example_before": (r"--kv-cache-dtype mxfp4",),
        },
    ),
    dict(
        id="5e881e2eb4b6f6ef",
        subsystem="quantization",
        audience="user-setting",
        message="--kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16.",
        site="python/sglang/srt/layers/quantization/fp4_kv_cache_quant_method.py:815",
        also_sites=("python/sglang/srt/mem_cache/kv_cache_dtype.py:63",),
        verified=(
            "fp4_kv_cache_quant_method.py:814-815 and mem_cache/kv_cache_dtype.py:63 raise for "
            "--kv-cache-dtype fp4_e2m1 (still a choice, server_args.py:613); the message names "
            "the replacement fp4_mx_block16 (server_args.py:612)"
        ),
        facts={
            "when": (
                r"`--kv-cache-dtype`",
                r"fp4_e2m1",
                r"kv_cache_dtype\.py:63",
            ),
            "solutions": (r"fp4_mx_block16",),
            "example_before": (r"--kv-cache-dtype fp4_e2m1",),
            "example_after": (r"--kv-cache-dtype fp4_mx_block16",),
        },
        absent={
            # not an FP8 cache: the replacement the message names (fp4_kv_cache_quant_method.py:815)
            "example_after": (r"fp8_e5m2",),
        },
    ),
    dict(
        id="d631e477872b72fe",
        subsystem="quantization",
        audience="user-setting",
        message=(
            "expert-pack requires --disable-shared-experts-fusion so the shared expert remains on "
            "the dense GGUF path"
        ),
        site="python/sglang/srt/layers/quantization/expert_pack.py:99",
        verified=(
            "expert_pack.py:98-99 raises when layer.num_fused_shared_experts; "
            "--disable-shared-experts-fusion is store_true (server_args.py:2567); "
            "arg_groups/expert_pack_hook.py:194-198 already declares it for --load-format "
            "expert_pack"
        ),
        facts={
            "when": (
                r"`layer\.num_fused_shared_experts` is true",
                r"`--disable-shared-experts-fusion`",
            ),
            "solutions": (r"`--disable-shared-experts-fusion`",),
        },
        absent={
            # the message's next word is no value of the store_true flag (expert_pack.py:99)
            "solutions": (r"--disable-shared-experts-fusion so",),
            "example_after": (r"--disable-shared-experts-fusion so",),
        },
    ),
    # ------------------------------------------------------------ multimodal
    dict(
        id="05346279f88b52a2",
        subsystem="multimodal",
        audience="user-input",
        message=(
            "Video placeholder count does not match video_data: {len(video_data)} video(s) given"
        ),
        site="python/sglang/srt/multimodal/processors/dots_note_omni.py:454",
        verified=(
            "dots_note_omni.py:384-454 (DotsNoteOmniProcessor.process_mm_data_async): with "
            "request_obj.video_data given, each video fills one video placeholder of the prompt "
            "(:428-450); a placeholder left in the prompt (more placeholders than videos) raises "
            "at :452-454"
        ),
        facts={
            "what": (r"`video_data`", r"`leftover`"),
        },
        defects=(
            dict(
                reason=(
                    "no Solutions: the request's prompt must hold one video placeholder per item "
                    "of `video_data` (dots_note_omni.py:428-454)"
                ),
                must={"solutions": (r"`video_data`", r"placeholder")},
            ),
        ),
    ),
    dict(
        id="88d36c6123f3fe65",
        subsystem="multimodal",
        audience="dependency",
        message="torchaudio is required for audio inputs; install torchaudio",
        site="python/sglang/srt/multimodal/processors/mimo_audio.py:148",
        verified=(
            "mimo_audio.py:26-34 sets torchaudio and MelSpectrogram to None when `import "
            "torchaudio` fails; :147-148 raises then; installing torchaudio avoids it"
        ),
        facts={
            "when": (
                r"`torchaudio` is `None`",
                r"`MelSpectrogram` is `None`",
            ),
            # torchaudio is None because `import torchaudio` failed at module
            # import (mimo_audio.py:26-34): the card says so and to install it
            "what": (
                r"`torchaudio` and `MelSpectrogram` are `None` when an import of the `try` at "
                r"line 26 of `python/sglang/srt/multimodal/processors/mimo_audio\.py` failed",
                r"the `except ImportError` at line 29 sets them",
            ),
            "solutions": (
                r"Install the package that provides the `torchaudio` module",
                # the check imports the name the code imports, not only the module
                r'`python -c "import torchaudio; '
                r'from torchaudio\.transforms import MelSpectrogram"`',
            ),
        },
    ),
    dict(
        id="5203fd0c9acb86e3",
        subsystem="multimodal",
        audience=None,
        message=(
            "image_mode='{mode}' is not supported with multiple images (got {num_images} images). "
            "Please use one of: {list(_MULTI_IMAGE_ALLOWED)}"
        ),
        site="python/sglang/srt/multimodal/processors/unlimited_ocr.py:46",
        verified=(
            "unlimited_ocr.py:43-46: _MULTI_IMAGE_ALLOWED = ('tiny', 'small', 'base'); the mode "
            "is the request's images_config['image_mode'], default 'gundam' (:25, :30-32, "
            ":91-94), so a multi-image request without images_config raises"
        ),
        facts={
            "when": (
                r"`num_images > 1`",
                r"_MULTI_IMAGE_ALLOWED",
            ),
        },
        defects=(
            dict(
                audience="unsupported",
                reason=(
                    "filed internal: the request's images_config (unlimited_ocr.py:91-94) is not "
                    "traced to a request field, so the card page is missing"
                ),
            ),
            dict(
                reason=(
                    "the card names neither the accepted modes, _MULTI_IMAGE_ALLOWED = ('tiny', "
                    "'small', 'base') (unlimited_ocr.py:43), nor that the default image_mode "
                    "'gundam' (unlimited_ocr.py:25) is refused, so a multi-image request without "
                    "images_config raises"
                ),
                must={
                    "when": (r"`gundam`",),
                    "solutions": (
                        r"`tiny`",
                        r"`small`",
                        r"`base`",
                    ),
                },
            ),
        ),
    ),
    # ------------------------------------------------------------ diffusion
    dict(
        id="4e1edf39aaa156c6",
        subsystem="diffusion",
        audience="user-setting",
        message="CFG Parallelism is enabled via `--enable-cfg-parallel`, but num_gpus == 1",
        site="python/sglang/multimodal_gen/runtime/server_args/server_args.py:3639",
        verified=(
            "multimodal_gen/runtime/server_args/server_args.py:3630-3639 raises with "
            "enable_cfg_parallel and num_gpus == 1; num_gpus defaults to 1 (:270, --num-gpus at "
            ":2060-2065); --cfg-parallel-size > 1 also turns enable_cfg_parallel on (:1331-1337); "
            "the diffusion options are not srt server options (python/sglang/launch_server.py "
            "uses srt ServerArgs), they go to `sglang serve` (cli/serve.py:102-110)"
        ),
        facts={
            "when": (
                r"`--enable-cfg-parallel`",
                is_("--num-gpus", "1"),
            ),
            "solutions": (r"`--enable-cfg-parallel`",),
        },
        absent={
            # refuted: the default of --num-gpus is 1, the failing value
            # (multimodal_gen/runtime/server_args/server_args.py:270)
            "solutions": (
                r"(?i)leave `--num-gpus` out",
                r"ServerArgs\.num_gpus",
            ),
            # srt's launcher has no --enable-cfg-parallel / --num-gpus (diffusion options,
            # multimodal_gen ServerArgs :2060, :2158)
            "example": (r"sglang\.launch_server",),
        },
        defects=(
            dict(
                reason=(
                    "Example fix 'before' shows `--enable-cfg-parallel VALUE`, but the option is "
                    "a StoreBoolean taking true/false whose help says 'Use false to disable it "
                    "explicitly' (multimodal_gen/runtime/server_args/server_args.py:2158-2163): "
                    "the failing launch is `--enable-cfg-parallel true` (or no value), and "
                    "`--enable-cfg-parallel false` is a fix no Solution offers"
                ),
                must={
                    "solutions": (
                        r"`--enable-cfg-parallel false`|`--enable-cfg-parallel` to `false`",
                    ),
                },
                must_not={
                    "example_before": (r"--enable-cfg-parallel VALUE",),
                },
            ),
        ),
    ),
    dict(
        id="32306a1d989e42d3",
        subsystem="diffusion",
        audience="user-setting",
        message="--dist-init-addr is required when --nnodes > 1",
        site="python/sglang/multimodal_gen/runtime/server_args/server_args.py:3563",
        verified=(
            "multimodal_gen/runtime/server_args/server_args.py:3556-3563: --nnodes < 1 and a bad "
            "--node-rank raise first; nnodes > 1 without --dist-init-addr raises; --nnodes "
            "defaults to 1 (:277, add_argument at :2073)"
        ),
        facts={
            "when": (
                off("--dist-init-addr"),
                r"`--nnodes`",
                r"self\.nnodes > 1",
                # re-verified: ServerArgs.nnodes = 1 (multimodal_gen/.../server_args.py:277)
                r"`--nnodes`: default `1`",
            ),
            "solutions": (pass_("--dist-init-addr"),),
            # re-verified: this diffusion ServerArgs's own help
            # (multimodal_gen/runtime/server_args/server_args.py:2087-2092: "The host:port
            # distributed rendezvous address, reachable from every node. Required when
            # --nnodes > 1."), not the srt option's (srt/server_args.py:922)
            "what": (r"rendezvous address",),
        },
        absent={
            "when": (r"default `ServerArgs\.nnodes`",),
            "what": (r"srt/server_args\.py:922",),
            "solutions": (
                r"default `ServerArgs\.nnodes`",
                r"The host address for initializing distributed backend",
            ),
        },
    ),
    dict(
        id="a5814a4a2199bccf",
        subsystem="diffusion",
        audience="user-setting",
        message=(
            "Currently enabling vae_sp requires enabling vae_tiling, please set --vae-tiling to "
            "True."
        ),
        site="python/sglang/multimodal_gen/configs/pipeline_configs/base.py:1117",
        verified=(
            "pipeline_configs/base.py:1116-1117 raises when vae_sp and not vae_tiling; both "
            "default True (:235, :240); --vae-tiling and --vae-sp are StoreBoolean options taking "
            "true/false (:851-877, utils.py:137-160), so `--vae-tiling false` triggers it and "
            "`--vae-tiling true` or `--vae-sp false` avoids it"
        ),
        # --vae-tiling is built from a default prefix (f"--{prefix_with_dot}vae-tiling",
        # base.py:851-856) and added by the diffusion ServerArgs parser
        # (runtime/server_args/server_args.py:2736)
        facts={
            "when": (r"`self\.vae_sp` is true\b", r"`--vae-tiling` is set to false"),
            "solutions": (r"`--vae-tiling`", r"Leave `--vae-tiling` out: its default is `True`"),
            "example_before": (
                r"python -m sglang\.multimodal_gen\.runtime\.launch_server \.\.\. "
                r"--vae-tiling false",
            ),
        },
        absent={
            "when": (r"vae_tiling` is off \(not given\)", r"`--vae-tiling` is unset"),
        },
    ),
    # ------------------------------------------------------------ LoRA
    dict(
        id="4ee3669f49190d45",
        subsystem="LoRA",
        audience="user-setting",
        message=(
            "If 'all' is specified in --lora-target-modules, it should be the only module "
            "specified."
        ),
        site="python/sglang/srt/arg_groups/lora_hook.py:132",
        verified=(
            "lora_hook.py:125-134 asserts `all` is alone in --lora-target-modules (choices "
            "include `all`, server_args.py:2971-2979) once LoRA is on; --enable-lora is "
            "Optional[bool], a store_true flag (arg_utils.py:321-323), set to True when "
            "--lora-paths is given (lora_hook.py:24-29)"
        ),
        facts={
            "when": (
                on("--lora-target-modules"),
                '"all" in cfg\\.lora_target_modules',
                r"`--enable-lora`",
            ),
        },
        absent={
            # --enable-lora is Optional[bool], a store_true flag (arg_utils.py:321-323)
            "example_before": (r"--enable-lora VALUE",),
            # --lora-paths turns it on when unset (lora_hook.py:24-29): said, not ignored
            "solutions": (r"Leave `--enable-lora` unset(?![^\n]*--lora-paths)",),
        },
    ),
    dict(
        id="fc8140fe7c8aa695",
        subsystem="LoRA",
        audience="user-setting",
        message="--max-lora-chunk-size must be a power of 2 between 16 and 128.",
        site="python/sglang/srt/arg_groups/lora_hook.py:153",
        verified=(
            "lora_hook.py:152-156 asserts 16 <= --max-lora-chunk-size <= 128 and a power of 2; "
            "the option's choices are 16, 32, 64, 128, default 16 (server_args.py:3015-3022), so "
            "only values given through the Python API reach it from outside argparse"
        ),
        facts={
            "when": (on("--max-lora-chunk-size"),),
            "solutions": (
                r"`--max-lora-chunk-size`[^\n]*power of 2 between 16 and 128",
                r"`16`",
            ),
        },
        absent={
            # --enable-lora is Optional[bool], a store_true flag (arg_utils.py:321-323)
            "example_before": (r"--enable-lora VALUE",),
            "solutions": (r"Leave `--enable-lora` unset(?![^\n]*--lora-paths)",),
        },
    ),
    dict(
        id="4d4b522590784431",
        subsystem="LoRA",
        audience="user-setting",
        message=(
            "max_loaded_loras should be greater than or equal to max_loras_per_batch. "
            "max_loaded_loras={cfg.max_loaded_loras}, "
            "max_loras_per_batch={cfg.max_loras_per_batch}"
        ),
        site="python/sglang/srt/arg_groups/lora_hook.py:143",
        verified=(
            "lora_hook.py:142-143 asserts --max-loaded-loras (default None, server_args.py:2993) "
            ">= --max-loras-per-batch (default 8, :2994-2998): `--max-loaded-loras 4` alone "
            "raises"
        ),
        facts={
            "when": (
                on("--max-loaded-loras"),
                r"`--max-loras-per-batch`",
            ),
            "solutions": (r"`--max-loaded-loras`",),
        },
        absent={
            # --enable-lora is Optional[bool], a store_true flag (arg_utils.py:321-323)
            "example_before": (r"--enable-lora VALUE",),
        },
        defects=(
            dict(
                reason=(
                    "Solutions never name --max-loras-per-batch (default 8, "
                    "server_args.py:2994-2998), the other side of the comparison at "
                    "lora_hook.py:143"
                ),
                must={
                    "solutions": (r"`--max-loras-per-batch`",),
                },
            ),
        ),
    ),
    dict(
        id="7c640bb07d34a414",
        subsystem="LoRA",
        audience="user-setting",
        message=(
            "When no initial --lora-paths is provided, you need to specify both --max-lora-rank "
            "and --lora-target-modules for LoRA initialization."
        ),
        site="python/sglang/srt/arg_groups/lora_hook.py:137",
        also_sites=("python/sglang/srt/lora/lora_manager.py:571",),
        verified=(
            "lora_hook.py:137-139 asserts --lora-paths, or both --max-lora-rank and "
            "--lora-target-modules, once LoRA is on (:38); lora_manager.py:571 raises the same in "
            "LoRAManager.init_state"
        ),
        facts={
            "when": (
                r"`--lora-paths` is unset or empty",
                r"lora_manager\.py:571",
            ),
            "solutions": (
                pass_("--lora-paths"),
                r"`--max-lora-rank`",
                r"`--lora-target-modules`",
            ),
        },
        absent={
            # --enable-lora is Optional[bool], a store_true flag (arg_utils.py:321-323)
            "example_before": (r"--enable-lora VALUE",),
        },
    ),
    # ------------------------------------------------------------ distributed
    dict(
        id="8897f8992d5061d3",
        subsystem="distributed",
        audience=None,
        message="{len(partitions)=} does not match {pp_size=}.",
        site="python/sglang/srt/distributed/utils.py:116",
        verified=(
            "distributed/utils.py:103-116: partition_list_str = "
            "os.getenv('SGLANG_PP_LAYER_PARTITION'), ignored when pp_size == 1; raises when its "
            "comma-separated count differs from pp_size"
        ),
        facts={
            "when": (
                r"`len\(partitions\) != pp_size`",
                r"`partition_list_str` is not `None`",
                # the handler at line 111 raises 'Invalid partition string: ...' instead
                r"the handler at line 111 leaves\): that handler raises another error at line 112",
            ),
        },
        absent={
            # a partition string that is not comma-separated ints is no fix
            "solutions": (r"the `try` block raised `ValueError`",),
            "example_after": (r"try body raised",),
        },
        defects=(
            dict(
                audience="user-setting",
                reason=(
                    "filed internal: SGLANG_PP_LAYER_PARTITION (distributed/utils.py:103) is read"
                    " through .split, and pp_size comes from callers the trace does not resolve, "
                    "so the card page is missing"
                ),
            ),
            dict(
                reason=(
                    "partition_list_str is os.getenv('SGLANG_PP_LAYER_PARTITION') "
                    "(distributed/utils.py:103), reset to None when pp_size == 1 (:104-107); the "
                    "card names neither the variable nor the pipeline size"
                ),
                must={
                    "when": (r"`SGLANG_PP_LAYER_PARTITION`",),
                    "solutions": (r"`SGLANG_PP_LAYER_PARTITION`",),
                },
            ),
        ),
    ),
    dict(
        id="40f4b3600442e6cd",
        subsystem="distributed",
        audience="user-setting",
        message=(
            "--enable-symm-mem requires torch>=2.8 "
            "(torch._C._cuda_beginAllocateCurrentThreadToPool was added there)."
        ),
        site="python/sglang/srt/distributed/device_communicators/pynccl_allocator.py:190",
        verified=(
            "pynccl_allocator.py:190 asserts after_2_8_0, which is torch_release >= (2, 8) (:19); "
            "--enable-symm-mem default False (server_args.py:1943-1950)"
        ),
        facts={
            "when": (
                r"`after_2_8_0`",
                r"`--enable-symm-mem`",
                # after_2_8_0 is `torch_release >= (2, 8)` (pynccl_allocator.py:19)
                r"`after_2_8_0` is set at module level as `torch_release >= \(2, 8\)` "
                r"\(line 19\)",
            ),
        },
    ),
    dict(
        id="3b31869fe1243c9f",
        subsystem="distributed",
        message=(
            "tensor_model_parallel_size ({tensor_model_parallel_size}) must be divisible by "
            "decode_context_parallel_size ({decode_context_parallel_size})"
        ),
        site="python/sglang/srt/distributed/parallel_state.py:2440",
        verified=(
            "parallel_state.py:2439-2440 raises when tp % dcp != 0; distributed/bootstrap.py "
            "passes tensor_model_parallel_size=tp_size and decode_context_parallel_size=dcp_size "
            "(--dcp-size, default 1, server_args.py:945-952); nothing in arg_groups checks it "
            "earlier"
        ),
        facts={
            "when": (r"tensor_model_parallel_size % decode_context_parallel_size != 0",),
        },
        defects=(
            dict(
                audience="user-setting",
                reason=(
                    "the sizes are --tp-size and --dcp-size (bootstrap.py passes tp_size / "
                    "dcp_size; server_args.py:945); the card names neither and files the error as "
                    "`dependency` because an earlier exit tests the platform"
                ),
                must={
                    "when": (
                        r"`--tp-size`",
                        r"`--dcp-size`",
                    ),
                },
            ),
        ),
    ),
    dict(
        id="e607956b9f7dbcd3",
        subsystem="distributed",
        audience="user-setting",
        message=(
            "--enable-tp-lm-head-all-to-all requires an available PyNCCL communicator for CUDA "
            "graph capture."
        ),
        site="python/sglang/srt/distributed/bootstrap.py:314",
        verified=(
            "bootstrap.py:130-135 calls it only on cuda with --enable-tp-lm-head-all-to-all and "
            "tp_size > 1; :313-314 raises without an available PyNCCL comm; the option "
            "(BooleanOptionalAction, server_args.py:1096-1110) defaults to None, resolved to on "
            "for pure-DP-attention decode nodes (overrides.py:1410-1429), so the fix is "
            "--no-enable-tp-lm-head-all-to-all"
        ),
        facts={
            "when": (
                r"`--enable-tp-lm-head-all-to-all`",
                r"`pynccl_comm` is `None`",
                on("--enable-tp-lm-head-all-to-all"),
            ),
            "solutions": (r"`--no-enable-tp-lm-head-all-to-all`",),
        },
    ),
    # ------------------------------------------------------------ OpenAI API
    dict(
        id="879cad92dac14e57",
        subsystem="OpenAI API",
        audience="unsupported",
        message=(
            "return_token_ids is not supported with streaming on /v1/chat/completions. Please "
            "set stream=false when using return_token_ids=true."
        ),
        site="python/sglang/srt/entrypoints/openai/serving_chat.py:991",
        verified=(
            "serving_chat.py:984-995 raises when the request has stream and return_token_ids "
            "true; both are fields of ChatCompletionRequest (protocol.py:866, default False); the "
            "message itself says to send stream=false, so a client fixes it by dropping one of "
            "the two request fields"
        ),
        facts={
            "what": (r"`request\.stream`", r"`request\.return_token_ids`"),
        },
        absent={"solutions": (r"--return-token-ids", r"--stream\b")},
        defects=(
            dict(
                reason=(
                    "the card has no Solutions, while the fix is a request field: send "
                    "`stream: false` or leave `return_token_ids` out (serving_chat.py:984-995, "
                    "protocol.py:866)"
                ),
                must={"solutions": (r"`stream`", r"`return_token_ids`")},
            ),
        ),
    ),
    dict(
        id="794e073ebc24ee70",
        subsystem="OpenAI API",
        audience="user-input",
        message="Exactly one of 'prompt' or 'messages' must be provided.",
        site="python/sglang/srt/entrypoints/openai/protocol.py:1467",
        verified=(
            "protocol.py:1444-1467: TokenizeRequest (the /tokenize body) has prompt and messages, "
            "both default None (:1450-1451); the validator raises when both or neither are given"
        ),
        facts={
            "what": (r"`TokenizeRequest", r"/tokenize"),
        },
        absent={"solutions": (r"`--prompt`", r"`--messages`")},
        defects=(
            dict(
                reason=(
                    "no Solutions: the request must carry exactly one of `prompt` and "
                    "`messages` (protocol.py:1450-1451, :1466-1467)"
                ),
                must={"solutions": (r"`prompt`", r"`messages`")},
            ),
        ),
    ),
    dict(
        id="d78b40f45a8687f6",
        subsystem="OpenAI API",
        audience="user-input",
        message=(
            "tool_choice 'required' or a named tool cannot be combined with response_format, "
            "regex, or ebnf: the tool-call constraint and the output constraint cannot both be "
            "honored."
        ),
        site="python/sglang/srt/entrypoints/openai/protocol.py:1154",
        verified=(
            "protocol.py:1143-1158 (ChatCompletionRequest.to_sampling_params): with a tool-call "
            "constraint and an existing regex/ebnf/structural_tag/json_schema constraint, "
            "tool_choice 'required' or a named ToolChoice raises; tool_choice 'auto' only logs a "
            "warning (:1159)"
        ),
        facts={
            "what": (
                r"cannot both be honored",
                r"`self\.tool_choice == \"required\"`",
            ),
        },
        defects=(
            dict(
                reason=(
                    "no Solutions: drop response_format/regex/ebnf from the request or use "
                    "tool_choice `auto`, which only logs a warning (protocol.py:1152-1159)"
                ),
                must={"solutions": (r"`tool_choice`", r"`response_format`")},
            ),
        ),
    ),
    dict(
        id="0a74dc91f837d4f5",
        subsystem="OpenAI API",
        audience="user-input",
        message="schema_ is required for json_schema response format request.",
        site="python/sglang/srt/entrypoints/openai/serving_completions.py:178",
        verified=(
            "serving_completions.py:174-180: a /v1/completions request whose response_format has "
            "type json_schema and a json_schema without a schema raises"
        ),
        facts={
            "what": (r"`request\.response_format\.type == \"json_schema\"`",),
        },
        defects=(
            dict(
                reason=(
                    "no Solutions: give `response_format.json_schema.schema` in the request or "
                    "use another response_format type (serving_completions.py:174-182)"
                ),
                must={"solutions": (r"`response_format`", r"schema")},
            ),
        ),
    ),
)
