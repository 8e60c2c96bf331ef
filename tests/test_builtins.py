"""Built-ins are registered in one place (toolemu.builtins), on a registry's first lookup, never by a module being
imported: so a registry holds every built-in whichever modules a process happened to import first."""

from __future__ import annotations

import json
import subprocess
import sys

IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, toolemu
skip = ("toolemu.gym", "toolemu.builtins", "toolemu.cli.app")  # gym needs an extra; the other two are entry points
for info in pkgutil.walk_packages(toolemu.__path__, "toolemu."):
    if not info.name.startswith(skip):
        importlib.import_module(info.name)
from toolemu.agents import registry as agents
from toolemu.gates import registry as gates
from toolemu.llm import registry as providers
from toolemu.scorers import registry as scorers
from toolemu.episode import element_spec as elements
print(json.dumps({
    "agents": sorted(agents._AGENTS) + sorted(agents._KINDS),
    "gates": [k.name for k in gates._KINDS],
    "providers": sorted(providers._PROVIDERS),
    "scorers": sorted(scorers._FACTORIES),
    "elements": sorted(elements._ELEMENTS),
}))
"""


def _python(code: str) -> str:
    """The code's last line of output, run by this interpreter (its own toolemu, away from any checkout)."""
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()[-1]


def test_importing_every_module_registers_nothing() -> None:
    """On 3bd36b9 importing the modules registered the scorers, providers, gate kinds and agents they define."""
    registered = json.loads(_python(IMPORT_EVERY_MODULE))
    assert registered == {"agents": [], "gates": [], "providers": [], "scorers": [], "elements": []}


def test_the_first_lookup_registers_every_built_in_of_its_kind() -> None:
    code = (
        "import json\n"
        "from toolemu.agents.registry import agent_names\n"
        "from toolemu.gates import gate_kinds\n"
        "from toolemu.llm.registry import provider_names\n"
        "from toolemu.scorers import scorer_names\n"
        "from toolemu.episode.element_spec import element_classes\n"
        "print(json.dumps([agent_names(), gate_kinds(), provider_names(), scorer_names(),"
        " [c.name for c in element_classes()]]))\n"
    )
    agents, gates, providers, scorers, elements = json.loads(_python(code))
    assert agents == ["react", "tools", "mcp-cmd:..."]
    assert gates == ["monitor", "python", "rules"]
    assert providers == ["local", "openai", "anthropic", "vllm", "mock", "scripted"]
    assert scorers == ["attack", "awareness", "checks", "helpfulness", "policy", "realism", "safety"]
    assert elements == ["gates", "user", "replay", "realism_filter"]


def test_an_outside_agent_command_is_an_agent_without_the_library_api() -> None:
    """On 3bd36b9 `mcp-cmd:` registered only when toolemu.api was imported: `toolemu robust --agent mcp-cmd:...`,
    which never imports it, could not name the run's outside agent."""
    code = (
        "import sys\n"
        "from toolemu.agents.registry import get_agent\n"
        "factory = get_agent('mcp-cmd:python agent.py')\n"
        "print(factory.spec, 'toolemu.api' in sys.modules)\n"
    )
    assert _python(code) == "mcp-cmd:python agent.py False"


def test_ones_own_registration_comes_after_the_built_ins() -> None:
    """A name of one's own replaces a built-in one, whenever it is registered: before any lookup too."""
    code = (
        "from toolemu.agents.registry import get_agent, register_agent\n"
        "mine = register_agent('react')(lambda setup: 'mine')\n"
        "print(get_agent('react') is mine)\n"
    )
    assert _python(code) == "True"
