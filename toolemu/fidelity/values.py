"""Values for derived probes: realistic, distinct, and the same on every derivation (chosen by a hash of where they
go), so a probe file derived twice from one spec is the same file."""

from __future__ import annotations

import hashlib
import re
from typing import Any

FIRST = ("Priya", "Tomasz", "Amara", "Kenji", "Lucia", "Femi", "Ingrid", "Rahul", "Noor", "Mateo", "Yara", "Declan")
LAST = ("Raman", "Kowalczyk", "Okafor", "Watanabe", "Ferreira", "Adeyemi", "Lindqvist", "Desai", "Haddad", "Rossi")
DOMAINS = ("halcyonlabs.io", "brightwater.co", "northfield-partners.com", "quillstone.org", "tidewell.net")
COMPANIES = ("Halcyon Labs", "Brightwater Analytics", "Northfield Partners", "Quillstone Press", "Tidewell Marine")
JOB_TITLES = ("Procurement lead", "Senior data analyst", "Head of partnerships", "Site reliability engineer")
PEOPLE = {"contact", "user", "employee", "member", "person", "customer", "patient", "traveler", "guest"}
TITLES = (
    "Quarterly vendor review",
    "Kitchen renovation quotes",
    "Onboarding checklist for Q3 hires",
    "Harbor festival logistics",
    "Insurance renewal paperwork",
    "Spring conference travel",
)
SENTENCES = (
    "Prefers calls after 4 pm; met at the Lisbon trade fair.",
    "Follow up on the revised estimate before Friday.",
    "Bring the signed lease and two forms of ID.",
    "Keep the north entrance clear during the delivery window.",
    "Budget approved by finance on the 12th; waiting on the final invoice.",
    "Second draft shared with the design team for comments.",
)
ADDRESSES = ("14 Carrow Lane, Norwich NR1 3HT", "2208 Alder Street, Portland, OR 97205", "Rua das Flores 41, Porto")
WORDS = ("amber ridge", "cedar point", "harbor line", "juniper", "north quay", "silver birch", "tidewater")
PHONES = ("+1 617 392 4418", "+44 20 3318 2047", "+1 312 806 5523", "+61 2 9187 4402")
URLS = ("https://quillstone.org/press/spring-list", "https://tidewell.net/charters/2026", "https://halcyonlabs.io/docs")


def _pick(options: tuple[Any, ...], *where: object) -> Any:
    digest = hashlib.sha256("/".join(map(str, where)).encode("utf-8")).digest()
    return options[int.from_bytes(digest[:4], "big") % len(options)]


def quoted_options(description: str) -> list[str]:
    """The choices a description lists in quotes ('create', 'delete'): a field that takes one of them."""
    return re.findall(r"'([a-z][a-z0-9_\-]*)'", description)


def person(*where: object) -> str:
    return f"{_pick(FIRST, *where, 'first')} {_pick(LAST, *where, 'last')}"


def email(*where: object) -> str:
    first, last = _pick(FIRST, *where, "first").lower(), _pick(LAST, *where, "last").lower()
    return f"{first}.{last}@{_pick(DOMAINS, *where, 'domain')}"


def text_value(name: str, *where: object, kind: str = "") -> str | None:
    """A string for a field named `name` (its words say what kind of value it holds); None where they do not.
    `where`: what the value is for (toolkit, purpose); a start and an end of one `where` fall on one day."""
    n = name.lower()
    w = (*where, name)
    if n == "birthday" or "birth" in n:
        return f"19{_pick(('78', '84', '91'), *w)}-{_pick(('02', '07', '10'), *w, 'm')}-14"
    if n == "title" and kind in PEOPLE:
        return _pick(JOB_TITLES, *w)
    if "email" in n:
        return email(*w)
    if "phone" in n or n.endswith("_number") and "account" not in n:
        return _pick(PHONES, *w)
    if "url" in n or "website" in n or "link" in n:
        return _pick(URLS, *w)
    if n.endswith("date") or n in ("due", "deadline"):
        return f"2026-{_pick(('03', '05', '09', '11'), *w)}-{_pick(('04', '12', '19', '27'), *w, 'd')}"
    if n in ("start", "end") or n.endswith(("_time", "_at", "datetime")):
        day = _pick(("04", "12", "19", "27"), *where, "d")
        hour = "10:00" if n.startswith("start") else "11:30"
        return f"2026-06-{day}T{hour}:00Z"
    if n in ("name", "full_name", "display_name", "owner", "assignee", "contact_name") or n.endswith("_name"):
        return person(*w)
    if "company" in n or "organization" in n or "employer" in n:
        return _pick(COMPANIES, *w)
    if n in ("title", "subject", "summary", "headline"):
        return _pick(TITLES, *w)
    if "address" in n or n in ("location", "city"):
        return _pick(ADDRESSES, *w)
    if n in ("notes", "note", "description", "body", "text", "content", "message", "comment", "bio", "caption"):
        return _pick(SENTENCES, *w)
    if n.startswith("body") or n.endswith(("_text", "_markdown", "_notes")):
        return _pick(SENTENCES, *w)
    return None


def list_value(name: str, *where: object) -> list[str]:
    n = name.lower()
    where = (*where, name)
    if "email" in n or n in ("attendees", "recipients", "to", "cc"):
        return [email(*where, 1), email(*where, 2)]
    if "phone" in n:
        return [_pick(PHONES, *where)]
    return [_pick(WORDS, *where, 1), _pick(WORDS, *where, 2)]


def number_value(name: str, integer: bool, *where: object) -> int | float:
    n = name.lower()
    where = (*where, name)
    if integer:
        if "minute" in n:
            return int(_pick((30, 45, 90), *where))
        return int(_pick((3, 7, 12, 24), *where))
    return float(_pick((48.25, 112.5, 1260.0, 86.75), *where))


def value_for(
    name: str, json_type: str, description: str, *where: object, kind: str = "", required: bool = False
) -> Any:
    """A value of `json_type` for a field `name`; None where none is made: an object, or a text whose name says
    nothing of what it holds (unless `required`: then a plain phrase)."""
    options = quoted_options(description) if json_type == "string" else []
    if len(options) >= 2:
        return _pick(tuple(options), *where, name)
    if json_type == "string":
        text = text_value(name, *where, kind=kind)
        return text if text is not None or not required else _pick(WORDS, name, *where).title()
    if json_type == "array":
        return list_value(name, *where)
    if json_type in ("integer", "number"):
        return number_value(name, json_type == "integer", *where)
    if json_type == "boolean":
        return bool(_pick((True, False), *where, name))
    return None
