"""Start llama-cpp-python's OpenAI-compatible server the way toolemu loads the embedded model.

`python tests/llama_server.py MODEL.gguf PORT [N_CTX]`. The server's CLI has no switch for llama.cpp's extra (AMX)
buffer types, which segfault on some CPUs, so they are turned off here, as toolemu.llm.local does, before the app
loads the model.
"""

from __future__ import annotations

import sys

import llama_cpp.llama_cpp as low_level
import uvicorn
from llama_cpp.server import app as server_app
from llama_cpp.server.settings import ModelSettings, ServerSettings

_default_params = low_level.llama_model_default_params


def _params_without_extra_bufts():  # type: ignore[no-untyped-def]
    params = _default_params()
    params.use_extra_bufts = False
    return params


def main() -> None:
    model, port = sys.argv[1], int(sys.argv[2])
    n_ctx = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
    low_level.llama_model_default_params = _params_without_extra_bufts
    settings = ModelSettings(
        model=model, model_alias="smollm", n_ctx=n_ctx, n_threads=1, n_threads_batch=1, verbose=False
    )
    app = server_app.create_app(server_settings=ServerSettings(host="127.0.0.1", port=port), model_settings=[settings])
    loaded = server_app._llama_proxy._current_model  # type: ignore[union-attr]
    if loaded is None or loaded.model_params.use_extra_bufts:
        sys.exit("llama_server: the model loaded with extra buffer types on; refusing to risk a segfault")
    print(f"llama_server: use_extra_bufts={loaded.model_params.use_extra_bufts}", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
