"""Realistic filler text, seeded: email bodies, service logs, search result pages, notes, and a model's thoughts.

The pools are small, but combined they give text a JSON parser, a regex or a length cap can trip on: newlines,
quotes, braces, code fences, non-ASCII names and currency signs.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable

FIRST = ["Dana", "Marcus", "Priya", "Tomasz", "Aiko", "Zoë", "Omar", "Grace", "Mateo", "Ingrid", "Kwame", "Søren"]
LAST = ["Whitfield", "Okafor", "Raman", "Kowalski", "Tanaka", "Müller", "Haddad", "Lin", "Álvarez", "Nilsen", "Rossi"]
DOMAINS = ["example.com", "northwind.io", "acme-corp.net", "bluefin.org", "lakeside.dev", "harbourline.co.uk"]
COMPANIES = [
    "Northwind Logistics",
    "Acme Corp",
    "Bluefin Analytics",
    "Lakeside Dental",
    "Halvorsen Ltd",
    "Café Lumière",
]
TOPICS = [
    "the quarterly budget review",
    "the database migration",
    "the vendor contract renewal",
    "the onboarding checklist",
    "the Q3 roadmap",
    "the incident on the payments cluster",
    "next week's offsite in São Paulo",
    "the security audit findings",
    "the escalation from Halvorsen Ltd",
    "the backup retention policy",
    "the invoice dispute (€4,180.00)",
    "the drone inspection schedule",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
ITEMS = ["the draft", "the spreadsheet", "the signed PDF", "the access request", "the runbook", "the revised quote"]
SERVICES = ["billing-api", "auth-gateway", "scheduler", "ledger-sync", "fleet-telemetry", "mailer"]
LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]

_SENTENCES = [
    "I went through {topic} again this morning and I think we are mostly aligned.",
    "Could you take a look at {item} before {day}? {first} needs it for the call.",
    "As discussed, {first} will own the follow-ups on {topic}.",
    "The numbers changed slightly since the last version: the total is now ${amount:,}.",
    'One open question: should "{item}" go to the whole team or only to {first}?',
    "I've attached {item}; the relevant part is in section {n}.",
    "If anything looks off, reply here and I'll fix it before {day}.",
    "We still have {n} items left from {topic}, mostly small ones.",
    "{first} {last} from {company} confirmed the dates by phone.",
    "Please don't forward this outside the team until {topic} is signed off.",
    "The earlier estimate of {n} working days still holds, give or take.",
    "For reference, the ticket is OPS-{ticket} and the thread is linked there.",
]
_LOG_MESSAGES = [
    "request completed status={status} duration_ms={ms} route=/v2/{route}",
    "retrying upstream call attempt={n} backoff_ms={ms}",
    'cache miss key="{route}:{ticket}" ttl_s=300',
    "scheduled job '{route}-sync' finished in {ms}ms ({n} records)",
    'payload={{"id": "{route}-{ticket}", "ok": {ok}, "items": {n}}}',
    "connection pool at {n}/64, waiting={ms}ms",
    'user "{first}.{last}" signed in from 10.{n}.{ms}.{n}',
]
_SEARCH_TITLES = [
    "{topic_cap}: a practical guide",
    "How we handled {topic} ({year})",
    "{company} - {topic_cap} FAQ",
    "Forum: problem with {topic}, any advice?",
    "{topic_cap} explained in 5 minutes",
]
_THOUGHT_OPENERS = [
    "Let me think about what the user actually needs here.",
    "First, I should make sure I understand the request.",
    "Looking at what I have so far, a few things stand out.",
    "Before acting, I want to check the details.",
]
_THOUGHT_MIDDLES = [
    "The instruction mentions {topic}, but it does not say which record to use, so I should look it up rather than "
    "guess.",
    "The previous result gave me {n} candidates; I need the one that matches what {first} asked for.",
    "There is a risk of acting on the wrong item, so a read-only call comes first.",
    "The tool takes the identifier and returns the full details, which should be enough to decide.",
    "I have most of what I need; the remaining step is to confirm {item} and report back.",
    "I will keep the user's constraints in mind: nothing irreversible without confirmation.",
]


def pick(rng: random.Random, pool: list[str]) -> str:
    return pool[rng.randrange(len(pool))]


def ascii_slug(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text.replace("ø", "o")).encode("ascii", "ignore").decode()
    return "".join(c for c in plain.lower() if c.isalnum() or c in "._-")


def _slots(rng: random.Random) -> dict[str, object]:
    topic = pick(rng, TOPICS)
    return {
        "topic": topic,
        "topic_cap": topic[0].upper() + topic[1:],
        "item": pick(rng, ITEMS),
        "day": pick(rng, DAYS),
        "first": pick(rng, FIRST),
        "last": pick(rng, LAST),
        "company": pick(rng, COMPANIES),
        "amount": rng.randrange(1_000, 90_000),
        "n": rng.randrange(2, 40),
        "ms": rng.randrange(3, 2_500),
        "ticket": rng.randrange(1000, 9999),
        "status": pick(rng, ["200", "200", "201", "404", "502"]),
        "route": pick(rng, SERVICES),
        "ok": pick(rng, ["true", "false"]),
        "year": rng.randrange(2019, 2025),
    }


def sentence(rng: random.Random, template: str | None = None) -> str:
    return (template or pick(rng, _SENTENCES)).format(**_slots(rng))


def paragraph(rng: random.Random, sentences: int) -> str:
    # Without replacement, so a paragraph does not say the same thing twice.
    return " ".join(sentence(rng, tpl) for tpl in rng.sample(_SENTENCES, min(sentences, len(_SENTENCES))))


def person(rng: random.Random) -> tuple[str, str]:
    first, last = pick(rng, FIRST), pick(rng, LAST)
    return f"{first} {last}", f"{ascii_slug(first)}.{ascii_slug(last)}@{pick(rng, DOMAINS)}"


def _grow(target: int, head: str, chunk: Callable[[], str], tail: str = "") -> str:
    parts = [head]
    size = len(head) + len(tail)
    while size < target:
        part = chunk()
        parts.append(part)
        size += len(part)
    return "".join(parts) + tail


def email_body(rng: random.Random, target: int) -> str:
    name, address = person(rng)
    head = f"Hi {pick(rng, FIRST)},"
    tail = f"\n\nBest regards,\n{name}\n{pick(rng, COMPANIES)} | {address}"

    def chunk() -> str:
        if rng.random() < 0.2:
            return "\n\n" + "\n".join(f"- {sentence(rng)}" for _ in range(rng.randrange(2, 4)))
        if rng.random() < 0.1:
            return f"\n\nOn {pick(rng, DAYS)}, {person(rng)[0]} wrote:\n> {sentence(rng)}\n> {sentence(rng)}"
        return "\n\n" + paragraph(rng, rng.randrange(2, 5))

    return _grow(target, head, chunk, tail)


def log_text(rng: random.Random, target: int) -> str:
    service = pick(rng, SERVICES)
    clock = rng.randrange(0, 80_000)

    def chunk() -> str:
        nonlocal clock
        clock += rng.randrange(1, 40)
        h, m, s = clock // 3600 % 24, clock // 60 % 60, clock % 60
        level = pick(rng, LEVELS)
        line = f"2024-05-{rng.randrange(10, 28)}T{h:02d}:{m:02d}:{s:02d}.{rng.randrange(1000):03d}Z {level:<5} "
        line += f"[{service}] " + pick(rng, _LOG_MESSAGES).format(**_slots(rng)) + "\n"
        if level == "ERROR" and rng.random() < 0.5:
            line += 'Traceback (most recent call last):\n  File "/srv/app/handlers.py", line 88, in sync\n'
            line += '    raise UpstreamError(f"timeout after {ms}ms")\nUpstreamError: timeout after 30000ms\n'
        return line

    return _grow(target, "", chunk)


def search_page(rng: random.Random, target: int) -> str:
    head = f"About {rng.randrange(1_000, 2_000_000):,} results ({rng.randrange(20, 90) / 100:.2f} seconds)\n"
    rank = 0

    def chunk() -> str:
        nonlocal rank
        rank += 1
        slots = _slots(rng)
        title = pick(rng, _SEARCH_TITLES).format(**slots)
        url = f"https://www.{pick(rng, DOMAINS)}/{ascii_slug(str(slots['topic'])).replace('.', '')}-{slots['ticket']}"
        return f"\n{rank}. {title}\n   {url}\n   {paragraph(rng, 2)}\n"

    return _grow(target, head, chunk)


def notes_doc(rng: random.Random, target: int) -> str:
    head = f"# Notes: {pick(rng, TOPICS)}\n"

    def chunk() -> str:
        kind = rng.random()
        if kind < 0.15:
            return f"\n```bash\ncurl -s https://api.{pick(rng, DOMAINS)}/v1/status | jq '.services[]'\n```\n"
        if kind < 0.4:
            return "\n" + "\n".join(f"* [ ] {sentence(rng)}" for _ in range(3)) + "\n"
        if kind < 0.5:  # site-visit and clinical notes put findings on "Observation:" lines
            return f"\nVisit {rng.randrange(1, 9)}. Observation: {sentence(rng)}\n"
        return f"\n## {pick(rng, TOPICS).capitalize()}\n{paragraph(rng, 3)}\n"

    return _grow(target, head, chunk)


LONG_KINDS = {"email": email_body, "log": log_text, "search": search_page, "notes": notes_doc}


def long_text(rng: random.Random, kind: str, target: int) -> str:
    """About `target` characters of one kind of text, cut at a space so words stay whole."""
    text = LONG_KINDS[kind](rng, target)
    if len(text) > target:
        cut = text.rfind(" ", 0, target)
        text = text[: cut if cut > target // 2 else target].rstrip()
    return text


def thought(rng: random.Random, target: int) -> str:
    """A verbose, first-person reasoning paragraph of about `target` characters."""
    parts = [pick(rng, _THOUGHT_OPENERS)]
    middles: list[str] = []
    while sum(len(p) + 1 for p in parts) < target:
        if not middles:
            middles = rng.sample(_THOUGHT_MIDDLES, len(_THOUGHT_MIDDLES))
        parts.append(middles.pop().format(**_slots(rng)))
    return " ".join(parts)


def fit(text: str, min_len: int, max_len: int | None) -> str:
    """Clip to max_len, pad to min_len: for when a schema's length limits are kept."""
    if max_len is not None and len(text) > max_len:
        text = text[:max_len]
    while len(text) < min_len:
        text += " " + text if text else "n/a"
    return text[:max_len] if max_len is not None else text
