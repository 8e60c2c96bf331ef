"""A stand-in for the `vllm` executable: `fake_vllm.py serve <model> --host H --port P [...]`.

It speaks just enough of vLLM's server (/health, /v1/models, /v1/chat/completions, VLLM_API_KEY auth) for the
manager's tests. Environment:
  FAKE_VLLM_RECORD    JSONL file: one {"event": "start", "argv", "pid", "api_key"} line per start, "stop" on SIGTERM
  FAKE_VLLM_REQUESTS  JSONL file: every chat request body
  FAKE_VLLM_DELAY     seconds to "load the model" before listening
  FAKE_VLLM_EXIT      exit with this code at once, after writing a few log lines
  FAKE_VLLM_IGNORE_TERM=1  ignore SIGTERM (only SIGKILL stops it)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from fake_openai import chat_body  # noqa: E402


def record(name: str, entry: dict[str, Any]) -> None:
    path = os.environ.get(name)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["serve"])
    parser.add_argument("model")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--lora-modules", nargs="*", default=[])
    args, _ = parser.parse_known_args()
    api_key = os.environ.get("VLLM_API_KEY")
    record("FAKE_VLLM_RECORD", {"event": "start", "argv": sys.argv[1:], "pid": os.getpid(), "api_key": bool(api_key)})

    if os.environ.get("FAKE_VLLM_IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:

        def on_term(signum: int, frame: Any) -> None:
            record("FAKE_VLLM_RECORD", {"event": "stop", "pid": os.getpid()})
            os._exit(0)

        signal.signal(signal.SIGTERM, on_term)

    if os.environ.get("FAKE_VLLM_EXIT"):
        print(f"INFO loading {args.model}", flush=True)
        print("ERROR CUDA out of memory: tried to allocate 20.00 GiB", file=sys.stderr, flush=True)
        sys.exit(int(os.environ["FAKE_VLLM_EXIT"]))
    print(f"INFO loading {args.model}", flush=True)
    time.sleep(float(os.environ.get("FAKE_VLLM_DELAY", "0")))
    models = [args.model, *(m.split("=", 1)[0] for m in args.lora_modules)]

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if api_key and self.headers.get("Authorization") != f"Bearer {api_key}":
                self._send(401, {"error": "Unauthorized"})
                return False
            return True

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path == "/health":
                self._send(200, {})
            elif self.path == "/v1/models" and self._authorized():
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in models]})
            elif self.path != "/v1/models":
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            if not self._authorized():
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            record("FAKE_VLLM_REQUESTS", body)
            if body.get("model") not in models:
                self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
            elif body.get("response_format"):
                self._send(200, chat_body(json.dumps({"answer": f"json from {body['model']}"})))
            else:
                self._send(200, chat_body(f"hello from {body['model']}"))

        def log_message(self, *a: Any) -> None:
            print("request:", *a, flush=True)

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"INFO serving on http://{args.host}:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
