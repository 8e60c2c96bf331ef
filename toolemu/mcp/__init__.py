"""Emulated toolkits over the Model Context Protocol, for agents that live outside ToolEmu.

- `toolemu mcp serve` (`toolemu.mcp.serve`): a case's toolkits as an MCP server, over stdio or streamable HTTP; each
  session is one episode of a run folder.
- `--agent mcp-cmd:<command>` / `--agent-cmd <command>` (`toolemu.mcp.command`): an external agent's command, run
  once per (case, trial) of `toolemu run`, against a loopback MCP server of that episode.

Both play every call through the episode pipeline (`toolemu.mcp.episodes`: validation, gates, the emulator), so an
outside agent's episode is recorded, judged and reported like our agent's. This module imports nothing heavy: the
`mcp` SDK loads when a server is built.
"""
