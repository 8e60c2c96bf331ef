"""The domains a recipient can name, read as a hostile agent would hope they are not: for domain_in and not_domain.

A string may carry several addresses ("b@evil.com, a@mybank.com", "Bob <b@evil.com> (a@mybank.com)"), several
readings of one ("a@evil.com@mybank.com", a URL whose backslash a browser reads as a slash, percent-encoding) or
look-alikes of a domain (Cyrillic letters, fullwidth forms, zero-width characters, punycode). Every domain any
reading names is a candidate, so that a deny rule denies when any of them would be denied:

- `not_domain` (an allow list) compares strictly: only case and a trailing dot are ignored, as DNS does, so a
  look-alike is outside the list;
- `domain_in` (a block list) also compares folded forms (NFKC, case folding, zero-width characters removed,
  punycode decoded, look-alike letters mapped to Latin ones), so a look-alike is inside it.

A text that names no domain at all (a bare "a@", a number) cannot be decided: the caller says what that means.
"""

from __future__ import annotations

import contextlib
import html
import re
import unicodedata
from urllib.parse import unquote, urlparse

MAX_TEXT = 100_000  # characters: a recipient field longer than this is not read

# Where a host name ends: separators between addresses, URL delimiters, quotes and brackets.
_HOST = re.compile(r"[^\s/\\?#:@,;|<>()\"'\[\]{}`=&%!*+$^~]+")
_BARE = re.compile(r"(:[0-9]+)?([/?#].*)?", re.DOTALL)  # what may follow a bare host name: a port, a path
_TOKEN_SEPARATORS = re.compile(r"[\s,;|<>()\"'\[\]{}`]+")
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})  # the dots IDNA reads as dots
# Letters that look like Latin ones (Cyrillic, Greek, Latin extensions), mapped to what they imitate.
_LOOK_ALIKES = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
        "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
        "һ": "h", "ɡ": "g", "ɩ": "i", "ı": "i", "ȷ": "j", "ℓ": "l", "α": "a", "β": "b", "ε": "e", "η": "n",
        "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ѵ": "v",
    }
)  # fmt: skip


def strict(domain: str) -> str:
    """A domain as DNS compares it: case and a trailing dot ignored."""
    return domain.lower().strip(".")


def _punycode_decoded(domain: str) -> str:
    labels = []
    for label in domain.split("."):
        if label.startswith("xn--"):
            with contextlib.suppress(UnicodeError, ValueError):  # not punycode after all: kept as it is
                label = label[4:].encode("ascii").decode("punycode")
        labels.append(label)
    return ".".join(labels)


def folded(domain: str) -> set[str]:
    """The forms a look-alike of a domain could be taken for: strict, NFKC-folded, punycode-decoded, de-confused."""
    forms = {strict(domain)}
    text = unicodedata.normalize("NFKD", domain.translate(_DOTS))  # compatibility forms, accents apart
    text = "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Mn")).casefold().strip(".")
    forms.add(text)
    decoded = unicodedata.normalize("NFKC", _punycode_decoded(text)).casefold()
    forms.update({decoded, text.translate(_LOOK_ALIKES), decoded.translate(_LOOK_ALIKES)})
    return {f for f in forms if f}


def in_domains(domain: str, domains: list[str]) -> bool:
    """Whether `domain` is one of `domains` or a subdomain of one (all already compared forms)."""
    return any(domain == d or domain.endswith("." + d) for d in domains)


def _domain_like(host: str) -> bool:
    return "." in host.strip(".")


def _host(text: str) -> str:
    found = _HOST.match(text)
    return found.group() if found else ""


def _after_ats(text: str) -> tuple[list[str], bool]:
    """The host after each '@' ("a@evil.com@mybank.com" names both), and a host before a path that ends in one
    ("evil.com/@mybank.com"); unreadable when an '@' is followed by no host ("a@")."""
    parts = text.split("@")
    hosts, unreadable = [], False
    head = re.split(r"[/\\?#]", parts[0], maxsplit=1)
    if len(head) > 1 and _domain_like(_host(head[0].rsplit(":", 1)[-1])):
        hosts.append(_host(head[0].rsplit(":", 1)[-1]))
    for part in parts[1:]:
        host = _host(part)
        if host.strip("."):
            hosts.append(host)
        else:
            unreadable = True
    return hosts, unreadable


def _url_hosts(token: str) -> tuple[list[str], bool]:
    """A URL's host as urlparse reads it, every part of its authority that reads as a host (a user part
    "mybank.com@evil.com" looks like the host to a person), and addresses in its path or query."""
    hosts = []
    try:
        name = urlparse(token).hostname
    except ValueError:  # a malformed URL ("http://[x"): its other readings still count
        name = None
    if name:
        hosts.append(name)
    rest = token.split("://", 1)[1]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    parts = authority.split("@")
    for i, part in enumerate(parts):
        host = _host(part)
        if host.strip(".") and (i == len(parts) - 1 or _domain_like(host)):
            hosts.append(host)
    more, unreadable = _after_ats(rest[len(authority) :]) if "@" in rest[len(authority) :] else ([], False)
    return hosts + more, unreadable or not hosts


def _hosts_in_token(token: str, bare: bool) -> tuple[list[str], bool]:
    """(hosts the token names, whether part of it names none). `bare`: a lone word counts as a host name."""
    if "://" in token:
        return _url_hosts(token)
    if "@" in token:
        return _after_ats(token)
    host = _host(token)
    if not _BARE.fullmatch(token[len(host) :]):  # "dbl:0f86" is not a host name with a port
        return [], False
    return ([host] if host.strip(".") and (bare or _domain_like(host)) else []), False


def hosts_in_text(text: str, bare_words: bool = True) -> tuple[list[str], bool]:
    """(every host name the text can be read to name, whether the text could not be read).

    `bare_words`: a lone word ("localhost") counts as a host when the text holds no address or URL; inside an
    object a lone word is a name or a label, not a recipient.
    """
    if len(text) > MAX_TEXT:
        return [], True
    if not text.strip():
        return [], False  # no recipient at all
    readings = {text, unquote(text), html.unescape(text), text.replace("\\", "/")}
    hosts: list[str] = []
    unreadable = False
    for reading in readings:
        addressy = "@" in reading or "://" in reading
        for token in _TOKEN_SEPARATORS.split(reading):
            if not token:
                continue
            found, bad = _hosts_in_token(token, bare=bare_words and not addressy)
            hosts += found
            unreadable |= bad
    if not hosts and bare_words:
        unreadable = True  # text, but no host name in any reading
    return list(dict.fromkeys(hosts)), unreadable
