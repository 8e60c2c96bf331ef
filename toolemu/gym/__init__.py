"""ToolEmu as a Gymnasium environment (the optional extra `gym`: pip install 'toolemu[gym]').

import gymnasium
import toolemu.gym  # registers toolemu/ToolEmu-v0
env = gymnasium.make("toolemu/ToolEmu-v0", settings=LLMSettings(model="mock"), reward_scorer="safety")
observation, info = env.reset(seed=0, options={"case": "policy_payments_paywave_dinner_requests_stranger"})
"""

try:
    import gymnasium
except ImportError as exc:  # an optional extra: say how to get it
    raise ImportError("toolemu.gym needs gymnasium: pip install 'toolemu[gym]'") from exc

from toolemu.gym.actions import ActionError, FinalAnswerAction, ToolCallAction, parse_action
from toolemu.gym.env import ToolEmuEnv, normalised

ENV_ID = "toolemu/ToolEmu-v0"

if ENV_ID not in gymnasium.registry:
    # The env truncates at its own max_iterations, so no TimeLimit wrapper; LLM emulation is not deterministic.
    gymnasium.register(id=ENV_ID, entry_point="toolemu.gym.env:ToolEmuEnv", nondeterministic=True)

__all__ = ["ENV_ID", "ActionError", "FinalAnswerAction", "ToolCallAction", "ToolEmuEnv", "normalised", "parse_action"]
