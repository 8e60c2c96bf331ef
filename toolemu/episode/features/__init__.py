"""The built-in episode elements, one module each: its settings, roles, pipeline elements, share of the run's
identity and options, in one element spec (`toolemu.episode.element_spec`); `toolemu.builtins` registers them.

- `gates`: gates between the agent and its tools (`--gate`), a monitor gate asking its own model;
- `user`: the simulated user who answers AskUser, and its honesty review (`--user`, `--user-reasks`, a reviewer);
- `replay`: a recorded run's observations, reused where the prefix matches (`--replay`);
- `realism`: the realism filter, which has flagged observations drafted again (`--realism-filter`, a judge).
"""
