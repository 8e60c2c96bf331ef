"""`vllm:<model>`: a role's model served by `vllm serve` on loopback, or by a running server (--base-url).

`vllm:<hf-id-or-path>` starts `vllm serve <model> --host 127.0.0.1 --port <free>` with the role's server options
(ModelOptions.vllm); `vllm:<base>+<adapter>` also loads a LoRA adapter and sends requests to it. Roles with the
same model and options share one server. The process side lives in toolemu.llm.vllm_server.
"""

from __future__ import annotations

import importlib.util
import os
import re
import secrets
import shlex
import shutil
import sys
from pathlib import Path

from toolemu.llm.options import ModelOptions
from toolemu.llm.providers import ModelConfigError
from toolemu.llm.vllm_server import ServerStartError, shared_server
from toolemu.secrets import register_secret_value

BIN_ENV = "TOOLEMU_VLLM_BIN"  # the executable to run (default: `vllm`)
GPU_CHECK_ENV = "TOOLEMU_VLLM_REQUIRE_GPU"  # "0": start without looking for an NVIDIA GPU (CPU/ROCm builds)


def split_model(model_name: str) -> tuple[str, str | None]:
    """'base+adapter' -> (base, adapter); 'base' -> (base, None)."""
    base, _, adapter = model_name.partition("+")
    return base, adapter or None


def adapter_name(adapter: str) -> str:
    """The name the server knows a LoRA adapter by: its folder's (or repo's) last part."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(adapter.rstrip("/")).name).strip("-.")
    return name or "adapter"


def served_model(options: ModelOptions) -> str:
    """What requests name as `model`: the adapter when there is one, else the model as given to the server."""
    base, adapter = split_model(options.model_name)
    return adapter_name(adapter) if adapter else base


def serve_args(options: ModelOptions) -> list[str]:
    """`vllm serve` arguments: the model, then its options (host and port are added at start)."""
    base, adapter = split_model(options.model_name)
    v = options.vllm
    args = ["serve", base]
    for flag, value in (
        ("--tensor-parallel-size", v.tensor_parallel_size),
        ("--quantization", v.quantization),
        ("--max-model-len", v.max_model_len),
        ("--gpu-memory-utilization", v.gpu_memory_utilization),
        ("--dtype", v.dtype),
    ):
        if value is not None:
            args += [flag, str(value)]
    if adapter:
        args += ["--enable-lora", "--lora-modules", f"{adapter_name(adapter)}={adapter}"]
    for arg in v.args:
        args += shlex.split(arg)
    return args


def _missing(model: str, detail: str = "") -> ModelConfigError:
    return ModelConfigError(
        f"{model} needs vLLM and a GPU{detail}: pip install 'toolemu[vllm]' on a machine with an NVIDIA GPU, "
        "or pass --base-url to use a running server"
    )


def vllm_command(model: str) -> list[str]:
    """How to run vLLM's command line here; one clear error line when it is not installed."""
    named = os.environ.get(BIN_ENV)
    if named:
        found = shutil.which(named)
        if not found:
            raise _missing(model, f" ({BIN_ENV}={named} is not an executable)")
        return [found]
    found = shutil.which("vllm") or shutil.which("vllm", path=str(Path(sys.executable).parent))
    if found:
        return [found]
    if importlib.util.find_spec("vllm") is not None:
        return [sys.executable, "-m", "vllm.entrypoints.cli.main"]
    raise _missing(model)


def check_gpu(model: str) -> None:
    if os.environ.get(GPU_CHECK_ENV, "1") == "0":
        return
    if shutil.which("nvidia-smi") or Path("/dev/nvidia0").exists():
        return
    raise ModelConfigError(
        f"{model} needs vLLM and a GPU, and no NVIDIA GPU was found (no nvidia-smi, no /dev/nvidia0): "
        f"run on a GPU machine, or pass --base-url to use a running server ({GPU_CHECK_ENV}=0 skips this check)"
    )


def endpoint(options: ModelOptions) -> tuple[str, str, str | None]:
    """(base URL, model name for requests, API key or None) for a vllm:<model> role, starting its server if needed."""
    if options.base_url:
        return options.base_url, served_model(options), None  # a running server: start nothing
    command = [*vllm_command(options.model), *serve_args(options)]
    check_gpu(options.model)
    # A random key keeps other local users off the server, unless the user passes their own --api-key.
    own_key = any(a == "--api-key" or a.startswith("--api-key=") for a in command)
    key = None if own_key else secrets.token_urlsafe(24)
    register_secret_value(key)
    label = split_model(options.model_name)[0]
    try:
        server = shared_server(command, label, key, options.vllm.log_dir, options.vllm.startup_timeout)
    except ServerStartError as exc:
        raise ModelConfigError(f"{options.model}: {exc}") from None
    return server.base_url, served_model(options), server.api_key
