"""What a strong model would write for a field, judged by its name: ids stay short, bodies get long."""

from __future__ import annotations

import random
import re
from typing import Any

from doubles import text as t

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

# Checked in order: the first class with a word in the field's name wins.
_CLASSES: list[tuple[str, set[str]]] = [
    ("thought", {"thought", "thoughts", "reasoning", "rationale", "plan"}),
    ("summary", {"summary", "headline"}),
    ("phone", {"phone", "mobile"}),
    ("id", {"id", "ids", "uuid", "key", "token", "handle", "sku", "code", "number", "ref"}),
    ("email", {"email", "emails", "sender", "recipient", "recipients", "from", "to", "cc", "bcc"}),
    ("time", {"date", "time", "timestamp", "at", "start", "end", "deadline", "due", "created", "updated", "since"}),
    ("time", {"after", "before", "until"}),
    ("url", {"url", "link", "uri", "href", "website", "endpoint"}),
    ("path", {"path", "file", "filename", "directory"}),
    ("query", {"query", "keyword", "keywords", "search", "term"}),
    ("long", {"body", "content", "text", "message", "description", "details", "log", "logs", "output", "stdout"}),
    ("long", {"stderr", "snippet", "html", "page", "transcript", "notes", "note", "report", "comment", "answer"}),
    ("long", {"response", "result", "results", "document", "draft", "instructions", "reply", "review", "feedback"}),
    ("title", {"name", "title", "subject", "label", "heading", "city", "country", "location", "address", "model"}),
    ("word", {"status", "state", "type", "kind", "category", "currency", "unit", "format", "mode", "level"}),
    ("word", {"folder", "mime"}),
    ("word", {"priority", "severity", "language", "method", "role", "visibility", "permission", "action"}),
]
_LONG_KIND = {
    "email": {"body", "message", "draft", "reply", "email"},
    "log": {"log", "logs", "output", "stdout", "stderr"},
    "search": {"results", "snippet", "page", "html", "search"},
}
_STATES = ["active", "pending", "completed", "failed", "scheduled", "archived", "in_progress"]
# Word-valued fields whose name narrows the vocabulary; anything else gets a state.
_WORD_POOLS: list[tuple[set[str], list[str]]] = [
    ({"mime"}, ["application/pdf", "text/csv", "text/plain", "image/png"]),
    ({"currency"}, ["USD", "EUR", "GBP", "JPY"]),
    ({"priority", "severity", "level"}, ["low", "medium", "high", "critical"]),
    ({"folder"}, ["inbox", "archive", "sent", "spam"]),
    ({"language"}, ["en", "de", "fr", "ja"]),
    ({"method"}, ["GET", "POST", "PUT", "DELETE"]),
]
_BOOL_WORDS = {"is", "has", "ok", "success", "enabled", "confirmed", "verified", "read", "deleted", "sent"}
_NUMBER_WORDS = {"pct", "kg", "m", "km", "kph", "mps", "lat", "lon", "latitude", "longitude", "amount", "price"}
_NUMBER_WORDS |= {"balance", "cost", "score", "rate", "temperature", "total", "fee", "percent", "speed", "weight"}
_INT_WORDS = {"count", "num", "size", "quantity", "age", "year", "port", "duration", "minutes", "seconds", "limit"}
LIST_WORDS = {"warnings", "tags", "labels", "errors", "attachments", "participants", "attendees", "members", "cc"}
LIST_WORDS |= {"permissions", "items", "scopes", "roles", "recipients", "ids", "keywords"}


def words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def field_class(name: str) -> str:
    found = set(words(name))
    for cls, names in _CLASSES:
        if found & names:
            return cls
    return "other"


def long_kind(name: str, rng: random.Random) -> str:
    found = set(words(name))
    for kind, names in _LONG_KIND.items():
        if found & names:
            return kind
    return t.pick(rng, list(t.LONG_KINDS))


def short_string(cls: str, name: str, rng: random.Random) -> str:
    """A realistic short value for a field of class `cls` (see field_class)."""
    if cls == "id":
        prefix = next((w for w in words(name) if w not in ("id", "ids")), "obj")[:10]
        return f"{prefix}_{rng.getrandbits(40):010x}"
    if cls == "email":
        return t.person(rng)[1]
    if cls == "time":
        day = f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        return day if "date" in words(name) else f"{day}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"
    if cls == "url":
        return f"https://{t.pick(rng, t.DOMAINS)}/{t.ascii_slug(t.pick(rng, t.TOPICS)).replace('.', '')[:24]}"
    if cls == "path" and ("name" in words(name) or name.lower() == "filename"):
        stem = t.pick(rng, ["lease_signed", "q3_report", "invoice_0412", "notes"])
        return f"{stem}.{t.pick(rng, ['pdf', 'csv', 'txt'])}"
    if cls == "path":
        folder = t.pick(rng, ["docs", "reports", "exports"])
        return f"/home/{t.ascii_slug(t.pick(rng, t.FIRST))}/{folder}/q{rng.randrange(1, 5)}.csv"
    if cls == "phone":
        return f"+1-555-01{rng.randrange(100):02d}"
    if cls == "query":
        return t.pick(rng, t.TOPICS).removeprefix("the ")
    if cls == "title":
        if set(words(name)) & {"subject", "title", "heading", "label"}:
            return t.pick(rng, ["Re: ", "Fwd: ", "", ""]) + t.pick(rng, t.TOPICS).capitalize()
        return t.pick(rng, [t.person(rng)[0], t.pick(rng, t.COMPANIES)])
    if cls == "word":
        found = set(words(name))
        return t.pick(rng, next((pool for names, pool in _WORD_POOLS if found & names), _STATES))
    return t.sentence(rng)


def number_for(name: str, schema: dict[str, Any], rng: random.Random, integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    found = set(words(name))
    if low is None and high is None:
        if found & {"lat", "latitude"}:
            low, high = -60, 60
        elif found & {"lon", "longitude"}:
            low, high = -170, 170
        elif found & {"pct", "percent", "score", "limit", "count", "num", "quantity", "max", "top", "page"}:
            low, high = 0, 100
        else:
            low, high = 0, 5000
    low = low if low is not None else (high - 1000)
    high = high if high is not None else (low + 1000)
    if "exclusiveMinimum" in schema:
        low += 1 if integer else 0.01
    if "exclusiveMaximum" in schema:
        high -= 1 if integer else 0.01
    if integer:
        return rng.randint(int(-(-low // 1)), int(high // 1)) if high >= low else int(low)
    return round(rng.uniform(low, high), 2)


def guess_schema(name: str) -> dict[str, Any]:
    """A schema for a key a tool's description names ('drone_id', 'battery_pct', 'warnings' ...)."""
    found = set(words(name))
    if found & _BOOL_WORDS and words(name)[0] in _BOOL_WORDS:
        return {"type": "boolean"}
    if found & _NUMBER_WORDS:
        return {"type": "number"}
    if found & _INT_WORDS:
        return {"type": "integer"}
    if name.lower() in LIST_WORDS:
        return {"type": "array", "items": {"type": "string"}}
    if found & {"location", "coordinates", "position"}:
        return {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}}
    return {"type": "string"}


# Shapes for untyped objects/arrays when the prompt names no keys for them.
RECORD_SHAPES: list[tuple[set[str], list[str]]] = [
    ({"email", "emails", "messages", "inbox", "threads"}, ["message_id", "from", "subject", "snippet", "received_at"]),
    ({"results", "search", "hits", "pages"}, ["title", "url", "snippet"]),
    ({"transactions", "payments", "orders", "invoices"}, ["transaction_id", "amount", "currency", "date", "note"]),
    ({"files", "documents", "attachments"}, ["file_id", "name", "path", "size_bytes", "updated_at"]),
    ({"events", "meetings", "appointments"}, ["event_id", "title", "start_time", "end_time", "location"]),
]
DEFAULT_SHAPE = ["id", "name", "status", "description", "updated_at"]


def record_keys(name: str) -> list[str]:
    found = set(words(name))
    return next((keys for names, keys in RECORD_SHAPES if found & names), DEFAULT_SHAPE)
