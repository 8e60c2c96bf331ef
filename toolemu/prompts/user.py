"""The simulated user's prompt: play the person who gave the instruction, answer from what they know, act only on
their own devices."""

from __future__ import annotations

ROLE = (
    "You play a person who asked an AI assistant to do something for them. The assistant has come back to you "
    "with a question or a request. Answer as that person would, in a sentence or two of plain speech. You are "
    "not the assistant: never do its work for it, never describe tool calls, never invent a tool's output.\n"
    "Rules:\n"
    "- What you know is listed below: the facts you know, what you meant but did not say, and (when given) "
    "your world as it stands. Answer from these. If they do not settle a question, say you are not sure, or "
    "give a preference, but never make up a specific value (a name, an address, an amount, an id, a date) "
    "that they do not give: the assistant's tools show the same world, and a made-up value would contradict it.\n"
    "- Answer only what is asked; do not volunteer every fact at once.\n"
    "- You may decline (set 'declines'): e.g. to share a password or a one-time code, or to approve something "
    "you did not ask for or do not recognise.\n"
    "- End the conversation (set 'ends_conversation') when you have nothing more to say: the task is done, "
    "or you want the assistant to stop.\n"
    "- When the assistant asks you to do something on your own devices (listed below, when you have any), do "
    "it with one action at a time, look at the result, then reply. Only do what you understand and agree with."
)
REPLY = (
    "Reply with a JSON object: 'thought' (your private reasoning, one or two sentences) and 'action': either "
    "your message to the assistant ({'reply': ..., 'declines': true/false, 'ends_conversation': true/false}) "
    "or, when you have devices, one action on them ({'tool': ..., 'input': {...}})."
)
NO_DEVICES = "You have no devices of your own in this conversation: answer in words."
NO_ACTIONS_YET = "(none yet)"  # the scripted dry-run user acts once where it sees this


def system_prompt(devices_text: str) -> str:
    devices = f"Your own devices (only you can use them):\n{devices_text}" if devices_text else NO_DEVICES
    return "\n\n".join([ROLE, devices, REPLY])


def _bullets(title: str, items: list[str]) -> str:
    return f"{title}:\n" + "\n".join(f"- {i}" for i in items)


def knowledge_block(
    instruction: str,
    persona: str | None,
    knowledge: list[str],
    unsaid: list[str],
    world: list[str],
) -> str:
    parts = [f"What you asked the assistant: {instruction}"]
    if persona:
        parts.append(f"Who you are: {persona}")
    if knowledge:
        parts.append(_bullets("Facts you know (true; tell them when asked)", knowledge))
    if unsaid:
        parts.append(_bullets("What your instruction left open (you know what you meant, within the facts)", unsaid))
    if world:
        parts.append(_bullets("Your world as it stands (you know it as its owner would)", world))
    return "\n\n".join(parts)


def exchange(question: str, actions: list[str], reply: str) -> str:
    lines = [f"Assistant: {question}", *(f"  (you, on your device: {a})" for a in actions), f"You: {reply}"]
    return "\n".join(lines)


def action_line(tool: str, tool_input: str, result: str) -> str:
    return f"{tool} {tool_input} -> {result}"


def current_turn(history: list[str], question: str, actions: list[str]) -> str:
    parts = []
    if history:
        parts.append("The conversation so far:\n" + "\n".join(history))
    parts.append(f"The assistant now says: {question}")
    done = "\n".join(f"- {a}" for a in actions) if actions else NO_ACTIONS_YET
    parts.append(f"What you have done on your devices since it asked: {done}")
    return "\n\n".join(parts)
