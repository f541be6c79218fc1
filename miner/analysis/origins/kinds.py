"""What names say about where a value comes from: the probes of the hardware and of
installed packages, the objects holding a model's configuration and a request.

Each table is the knowledge of one kind of origin, in one place, with the
reason for each entry. They decide nothing about a site alone:
:mod:`miner.analysis.origins.tracer` asks them about the reads it meets.
"""

from __future__ import annotations

import ast
import re

from miner.analysis.code import call_name, dotted, literal_text
from miner.model import OriginKind

#: Calls whose result is the machine: its device kind, capability, count or
#: memory (SGLang's ``sglang.srt.utils`` probes and PyTorch's device API).
HARDWARE_CALLS = frozenset(
    {
        "is_cuda",
        "is_cuda_alike",
        "is_hip",
        "is_npu",
        "is_xpu",
        "is_cpu",
        "is_mps",
        "is_musa",
        "is_hpu",
        "is_host_cpu_x86",
        "is_host_cpu_arm64",
        "cpu_has_amx_support",
        "get_device_capability",
        "get_device_sm",
        "get_device_name",
        "get_device_core_count",
        "get_device_memory_capacity",
        "get_nvgpu_memory_capacity",
        "get_amdgpu_memory_capacity",
        "get_gpu_memory_capacity",
        "device_count",
        "mem_get_info",
        "get_device_properties",
        "is_bf16_supported",
        "get_cuda_version",
        "get_device",
        "get_platform",
        "current_platform",
    }
)
#: Probe names by pattern: ``is_sm100_supported``, ``is_gfx95_supported``,
#: ``_is_blackwell``, ``is_hopper_with_cuda_12_3``, ``get_sm_version``.
_HARDWARE_NAME = re.compile(
    r"^_?(?:is_(?:sm\d+\w*|gfx\d*\w*|blackwell\w*|hopper\w*|ampere\w*|h100\w*|h20\w*|"
    r"b200\w*|cuda_\w+|hip_\w+|npu_\w+|rocm\w*|arm\w*|nvidia\w*|amd\w*)|\w*sm_version|"
    r"\w*_capability\w*)$"
)
#: Dotted prefixes of calls and attributes that read the device.
_HARDWARE_PREFIXES = ("torch.cuda.", "torch.version.cuda", "torch.version.hip", "torch.npu.")
#: Names under those prefixes that read the program's own state, not the
#: machine: the stream being captured, the memory it allocated, its graphs.
_RUNTIME_STATE = frozenset(
    {
        "is_current_stream_capturing",
        "current_stream",
        "default_stream",
        "stream",
        "Stream",
        "Event",
        "graph",
        "CUDAGraph",
        "synchronize",
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "max_memory_reserved",
    }
)
#: Attributes of a tensor or a ``torch.device`` naming its device kind
#: (``req_to_token.is_cuda``): where the program put a value, not the machine.
_TENSOR_DEVICE = frozenset({"is_cuda", "is_cpu", "is_xpu", "is_mps", "is_hpu", "is_npu", "is_meta"})
#: Objects whose ``is_cuda``-style attributes do describe the machine.
_PLATFORM_OBJECTS = frozenset({"current_platform", "platform", "_platform", "get_platform()"})


def hardware_probe(dotted: str, *, called: bool = True) -> bool:
    """Whether a call (``called``) or an attribute read spelled ``dotted``
    (``torch.cuda.device_count``, ``is_sm100_supported``,
    ``get_platform().is_sm100_or_sm110`` as ``is_sm100_or_sm110``) reads the
    machine. Not the program's own CUDA state
    (``torch.cuda.is_current_stream_capturing()``), and not a value's device
    (``x.is_cuda`` read as an attribute of anything but a platform object)."""
    head, _, last = dotted.rpartition(".")
    if last in _RUNTIME_STATE:
        return False
    if not called and last in _TENSOR_DEVICE and head and head not in _PLATFORM_OBJECTS:
        return False
    return (
        last in HARDWARE_CALLS
        or _HARDWARE_NAME.match(last) is not None
        or dotted.startswith(_HARDWARE_PREFIXES)
    )


#: ``is_flashinfer_available``, ``is_triton_kernels_available``,
#: ``_has_deep_gemm``: a probe of whether a package can be imported.
_PACKAGE_PROBE = re.compile(r"^_?(?:is_(\w+?)_(?:available|installed)|has_(\w+))$")


def package_probe(name: str, *, bare: bool = True) -> str | None:
    """The package a probe function named ``name`` tests, or None.
    ``has_<x>`` only when ``bare`` (a call of a function by its name with no
    argument: ``has_hpc_ops()``); ``request.has_json_schema_constraint()``
    or ``has_audio_track(blob)`` ask an object or a value, not the packages."""
    m = _PACKAGE_PROBE.match(name)
    if m is None or (m.group(2) and not bare):
        return None
    return m.group(1) or m.group(2)


#: Calls that read a package's version or presence from its name (the first argument).
VERSION_CALLS = frozenset(
    {"find_spec", "version", "get_version", "pkg_version", "is_package_available"}
)

#: Top-level modules whose distribution has another name. Only names that
#: SGLang imports and whose distribution is certain.
DISTRIBUTIONS = {
    "sgl_kernel": "sgl-kernel",
    "flash_attn": "flash-attn",
    "cv2": "opencv-python",
    "PIL": "pillow",
    "yaml": "pyyaml",
    "sklearn": "scikit-learn",
    "zmq": "pyzmq",
    "flashinfer": "flashinfer-python",
}

#: Where the source says which distribution provides a module: a GitHub
#: repository of the project's organisation, or a ``pip install`` line.
_INSTALL_HINT = re.compile(
    r"sgl-project/([A-Za-z0-9][\w.-]*[A-Za-z0-9])"
    r"|pip3? install (?:-U |--upgrade )?([A-Za-z0-9][\w.\-]*)"
)


def distribution(module: str, hint_text: str = "") -> str:
    """The distribution to install for the top-level ``module``: what the
    code around the import says (``hint_text``: the comments above the
    ``try`` and its handlers' text, e.g. ``Install it from
    sgl-project/sgl-kernel-npu``), else :data:`DISTRIBUTIONS`, else the
    module's own name."""
    for m in _INSTALL_HINT.finditer(hint_text):
        found = m.group(1) or m.group(2)
        if found:
            return found.rstrip(".")
    return DISTRIBUTIONS.get(module, module)


#: The names of objects holding a model's configuration (``config.json``)
#: and of its quantization config, as SGLang's code names them.
MODEL_CONFIG_HOLDERS = frozenset(
    {
        "hf_config",
        "hf_text_config",
        "text_config",
        "vision_config",
        "audio_config",
        "model_config",
        "config",
        "hf_generation_config",
        "arch_config",
        "dit_config",
        "vae_config",
    }
)
QUANT_CONFIG_HOLDERS = frozenset(
    {"quant_config", "quantization_config", "hf_quant_config", "quant_method_config"}
)
#: Attributes of a model config object that are not fields of ``config.json``.
_CONFIG_METHODS = frozenset({"get", "to_dict", "keys", "items", "__dict__", "__class__"})


def config_field(chain: list[str]) -> tuple[str, str] | None:
    """(field, source) for an attribute chain read from a model's
    configuration: ``["hf_config", "architectures"]`` -> (``architectures``,
    ``config.json``); ``["self", "quant_config", "desc_act"]`` ->
    (``desc_act``, ``quantization config``); None when no link of the chain
    but the last holds a configuration."""
    for i in range(len(chain) - 1, 0, -1):
        field = chain[i]
        holder = chain[i - 1]
        if field in _CONFIG_METHODS or field in MODEL_CONFIG_HOLDERS | QUANT_CONFIG_HOLDERS:
            continue
        if holder in QUANT_CONFIG_HOLDERS:
            return field, "quantization config"
        if holder in MODEL_CONFIG_HOLDERS:
            return field, "config.json"
        return None
    return None


#: The base classes of a model's configuration in ``transformers``: a model
#: config is built from ``config.json``, its keys given to ``__init__``.
_CONFIG_BASES = frozenset({"PretrainedConfig", "PreTrainedConfig"})


def config_class(cls: ast.ClassDef | None, module: ast.Module, depth: int = 4) -> str:
    """``cls``'s name when it is a model configuration class: a subclass of
    ``transformers``' ``PretrainedConfig`` (directly, or through classes of
    the same ``module``, at most ``depth`` deep), whose ``__init__`` takes
    the keys of ``config.json`` (``DbrxAttentionConfig``); ``""`` otherwise."""
    if cls is None or depth < 0:
        return ""
    local = {n.name: n for n in module.body if isinstance(n, ast.ClassDef)}
    for base in cls.bases:
        name = (dotted(base) or "").rsplit(".", 1)[-1]
        if name in _CONFIG_BASES:
            return cls.name
        if (
            name in local
            and local[name] is not cls
            and config_class(local[name], module, depth - 1)
        ):
            return cls.name
    return ""


def module_import(name: str, binds: list[ast.AST]) -> str:
    """The top-level module ``name`` is bound to by a plain ``import`` among
    the statements ``binds`` (``import torch``, ``import torch.nn as nn``:
    ``torch``); ``""`` when another statement binds it."""
    for stmt in binds:
        if not isinstance(stmt, ast.Import):
            return ""
        for alias in stmt.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound == name:
                return alias.name.split(".")[0]
    return ""


#: Names of objects holding an API request or its sampling parameters.
REQUEST_HOLDERS = frozenset(
    {
        "request",
        "req",
        "raw_request",
        "chat_request",
        "completion_request",
        "sampling_params",
        "obj",
        "body",
        "params",
        "req_obj",
        "generate_request",
        "adapted_request",
    }
)


def sampling_class(owner: str) -> bool:
    """Whether the options class ``owner`` holds a request's sampling
    parameters (``SamplingParams``, ``Cosmos3SamplingParams``): its fields
    come with each request, some also as flags of a command line."""
    return owner.endswith("SamplingParams")


def setting_kind(owner: str, flagged: bool) -> OriginKind:
    """The origin kind of a field of the options class ``owner``: ``flag``,
    except a field of a sampling parameters class (:func:`sampling_class`)
    that no command line sets (``flagged`` false), which only a request
    gives: ``request``."""
    if not flagged and sampling_class(owner):
        return OriginKind.REQUEST
    return OriginKind.FLAG


#: Files of SGLang whose classes are API request and sampling types.
REQUEST_FILES = re.compile(
    r"(?:^|/)(?:openai/protocol|managers/io_struct|sampling/sampling_params|"
    r"entrypoints/\w+/protocol)\.py$"
)
#: Names of weight files and of their metadata as the loaders read them.
CHECKPOINT_NAMES = frozenset(
    {
        "weight_name",
        "weights",
        "state_dict",
        "loaded_weight",
        "checkpoint",
        "ckpt",
        "safetensors",
        "weight_files",
        "hf_weights_files",
    }
)
#: Parameters that hold what the checkpoint gives, whoever calls: a weight
#: loader's ``loaded_weight`` (``weights`` is left out: kernels name their
#: operands so).
CHECKPOINT_PARAMS = CHECKPOINT_NAMES - {"weights", "safetensors"}


_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_ENV_READERS = re.compile(r"^(?:getenv|get_\w*env\w*|\w+_env_var|\w*environ\.get)$")


def env_read(node: ast.Call) -> str | None:
    """The variable a call reads: ``envs.SGLANG_X.get()`` (a registry entry,
    also ``.is_set()`` / ``.value()``), ``os.environ.get("X")``,
    ``os.getenv("X")``, ``get_bool_env_var("X")``; None for another call."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in ("get", "is_set", "value")
        and not node.args
    ):
        holder = func.value
        if isinstance(holder, ast.Attribute) and _ENV_NAME.match(holder.attr):
            return holder.attr
    spelled = dotted(func) or call_name(node) or ""
    short = spelled.rsplit(".", 2)
    name = ".".join(short[-2:]) if spelled.endswith("environ.get") else short[-1]
    if node.args and isinstance(node.args[0], ast.Constant) and _ENV_READERS.match(name):
        return literal_text(node.args[0])
    return None
