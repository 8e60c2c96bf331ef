"""`toolemu chat`: one message to a role's model, the reply printed."""

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolemu.cli.options import ModelFlags, takes
from toolemu.errors import InputError

if TYPE_CHECKING:
    from toolemu.llm import ModelOptions


@takes(ModelFlags)
def chat(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Argument(help="The user message.")],
    role: Annotated[str, typer.Option(help="Which role's model answers.")] = "agent",
    schema: Annotated[Path | None, typer.Option(help="JSON schema file the reply must match.")] = None,
    system_prompt: Annotated[str, typer.Option("--system", help="System message.")] = "You are a helpful assistant.",
) -> None:
    """Send one message to a role's model and print the reply (JSON when --schema is given)."""
    from toolemu.llm import build_hub, system, user
    from toolemu.specs.load import read_json_items

    settings = ModelFlags.of(ctx).settings()
    schema_obj = None
    if schema is not None:
        schema_obj = read_json_items(schema)[0]
    hub = build_hub(settings, (role,))
    try:
        reply = hub.model(role).complete([system(system_prompt), user(prompt)], schema=schema_obj)
    except Exception as exc:
        line = _not_a_chat_server(exc, settings.options_for(role))
        if line is None:
            raise
        raise line from None
    typer.echo(json.dumps(reply.value, ensure_ascii=False) if schema_obj is not None else reply.text)
    usage = hub.tracker.total()
    logging.getLogger("toolemu").info(
        "%s: %d prompt + %d completion tokens, %.1fs%s",
        hub.model(role).options.model,
        usage.prompt_tokens,
        usage.completion_tokens,
        reply.latency_s,
        " (cached)" if reply.cached else "",
    )


def _not_a_chat_server(exc: Exception, options: "ModelOptions") -> InputError | None:
    """A server that does not speak the chat API (a wrong --base-url) as one line of bad input naming what it sent;
    None for any other failure."""
    from toolemu.llm.protocol import foreign_reply
    from toolemu.secrets import strip_credentials

    what = foreign_reply(exc)
    if what is None:
        return None
    if options.base_url is None:
        return InputError.single("command line", f"expected {options.model}'s chat API, got {what}", field="--model")
    where = strip_credentials(options.base_url)
    problem = f"expected an OpenAI-compatible chat API at {where} (its /chat/completions), got {what}"
    return InputError.single("command line", problem, field="--base-url")
