"""Step 1: toolkit names from a taxonomy of domains."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from toolemu.errors import InputError
from toolemu.generation import prompts
from toolemu.generation.call import ask
from toolemu.generation.output import write_json
from toolemu.generation.schemas import Schema, array, name, text
from toolemu.generation.taxonomy import Domain
from toolemu.generation.text import SAFE_NAME, camel, clean
from toolemu.llm import ModelHub
from toolemu.specs.load import read_json_items
from toolemu.specs.schema import closed_object as obj  # every key required, in order

log = logging.getLogger("toolemu.generation")

NAME_PATTERN = "^[A-Z][A-Za-z0-9]{2,29}$"


class ToolkitIdea(BaseModel):
    """One line of a names file: what step 2 turns into a toolkit spec."""

    name: str = Field(pattern=SAFE_NAME.pattern, max_length=40)
    category: str = Field(min_length=1)
    description: str = Field(min_length=1)


def names_schema(count: int) -> Schema:
    idea = obj({"name": name(NAME_PATTERN, 30), "description": text(160)})
    return obj({"toolkits": array(idea, count, count)})


def generate_toolkit_names(
    hub: ModelHub, domains: list[Domain], per_domain: int = 2, avoid: Iterable[str] = ()
) -> list[ToolkitIdea]:
    """`per_domain` names for each domain (one call per domain); names in `avoid` or repeated are dropped."""
    if per_domain < 1:
        raise InputError.single("command line", "expected at least 1 name per domain", field="--per-domain")
    avoided = sorted(avoid)
    taken = {n.lower() for n in avoided}
    ideas: list[ToolkitIdea] = []
    schema = names_schema(per_domain)
    for domain in domains:
        hint = f"\nDo not use these names: {', '.join(avoided)}." if avoided else ""
        prompt = prompts.NAMES.format(domain=domain.name, description=domain.description, count=per_domain, avoid=hint)
        for raw in ask(hub, prompt, schema)["toolkits"]:
            kit_name = camel(raw["name"], "Toolkit")
            if kit_name.lower() in taken:
                log.warning("dropped the repeated toolkit name %s (%s)", kit_name, domain.name)
                continue
            taken.add(kit_name.lower())
            description = clean(raw["description"]) or f"A {domain.name.lower()} service."
            ideas.append(ToolkitIdea(name=kit_name, category=domain.name, description=description))
    if not ideas:
        raise InputError.single("generated names", "expected at least one new toolkit name, got none")
    return ideas


def write_names(path: Path, ideas: list[ToolkitIdea]) -> Path:
    return write_json(path, [i.model_dump() for i in ideas])


def read_names(path: Path) -> list[ToolkitIdea]:
    """A names file from step 1 (or written by hand): a JSON array of {name, category, description}."""
    ideas: list[ToolkitIdea] = []
    for index, item in enumerate(read_json_items(path)):
        try:
            ideas.append(ToolkitIdea.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(map(str, err["loc"])) or None
            got = json.dumps(err.get("input"), default=str)[:60]
            raise InputError.single(path, f"{err['msg']}, got {got}", f"item {index}", where) from None
    return ideas
