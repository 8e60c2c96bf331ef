"""The user reviewer's prompt: which facts does a simulated user's reply state that the user was never given?"""

from __future__ import annotations

REVIEWER = (
    "You check a reply that a simulated person gave to an AI assistant. The person may state only what they were "
    "given: their instruction, the facts they know, what they meant, their world as it stands, the conversation "
    "so far and the results of what they did on their own devices. List every specific fact in the reply that none "
    "of these gives or implies: a name, an address, an amount, an id, a date, a number, an event. A preference, a "
    "decision, a refusal, 'I am not sure' and plain agreement are not facts. When every fact is given, the reply is "
    "supported."
)
REPLY = (
    "Reply with a JSON object: 'thought' (your reasoning), 'verdict' ('supported' or 'unsupported') and "
    "'unsupported' (the facts the reply states that were not given, each quoted briefly; empty when supported)."
)
REASK = (
    "Your draft reply stated things you were never told: {facts}. Reply again using only what you know; where you "
    "do not know, say so or give a preference instead of a specific value."
)


def review_task(given: str, question: str, reply: str) -> str:
    return "\n\n".join(
        [
            "What the person was given:\n" + given,
            f"The assistant asked: {question}",
            f"The person's reply to check: {reply}",
        ]
    )
