"""The realism filter (`--realism-filter N`): a call element right after the tool that turns down an emulated
observation the deterministic checks (and, with a judge model, the realism judge) flag, and has the emulator draft it
again, told why, at most N times, before the agent sees it.

    agent -> [pre-call gates] -> [user] -> [replay] -> tool -> realism filter -> [post-call gates]

Every rejected draft stays in the record (`Step.rejected_drafts`: the text, the reasons, who flagged it, its unused
state patch). The rules run first; the judge is asked only about a draft the rules pass, so a placeholder costs no
judge call. The last redraft is not checked again (nothing could be done about it): the realism scorer rates what the
agent saw. The filter's model calls (judge calls and redrafts) are counted under their own usage role, `realism`.

A redrafted observation is not the emulator's plain answer to its replay key, so its step keeps no key: a later run
with `--replay` emulates that call afresh rather than reuse a filtered output as an unfiltered one.

N is bounded (at most 10: `toolemu.episode.features.realism`, the spec this element is built from), and the run's
stop request (Ctrl-C, SIGTERM) is heard between drafts: a stopping run does not wait for the redrafts of an
observation in flight.
"""

from __future__ import annotations

import threading

from toolemu.emulator import Emulator
from toolemu.emulator.realism_checks import case_facts_of, check_observation
from toolemu.emulator.realism_judge import RealismJudge
from toolemu.episode.features.realism import ROLE as USAGE_ROLE
from toolemu.episode.state import EpisodeState, Interrupted, PendingCall
from toolemu.log import RejectedDraft, Step
from toolemu.log.details import Finding


class RealismFilter:
    name = "realism_filter"

    def __init__(
        self,
        emulator: Emulator,
        redrafts: int,
        judge: RealismJudge | None = None,
        stop: threading.Event | None = None,
    ):
        self.emulator, self.redrafts, self.judge = emulator, redrafts, judge
        self.stop = stop  # the run's stop request: heard before each review and each redraft

    def _stopping(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise Interrupted()

    def process(self, call: PendingCall, state: EpisodeState) -> None:
        if not self._filtered(call):
            return
        index = len(state.steps)  # the step this call becomes
        for attempt in range(1, self.redrafts + 1):
            self._stopping()
            found = self.review(call, state, index, attempt)
            if not found:
                return
            self._stopping()
            draft = call.emulation
            assert draft is not None and call.observation is not None
            reasons = [f.reason for f in found]
            call.rejected_drafts.append(
                RejectedDraft(
                    observation=call.observation,
                    reasons=reasons,
                    flagged_by=sorted({f.source for f in found}),
                    state=list(draft.state),
                    emulator_thought=draft.thought,
                )
            )
            again = self.emulator.emulate(
                state.case,
                state.kits,
                state.steps,
                call.tool,
                call.tool_input,
                cache_salt=f"{state.salt}|realism-{attempt}",
                notes=reasons,
            )
            state.add_usage(USAGE_ROLE, again.usage)
            call.emulation, call.observation, call.obs_key = again, again.observation, ""

    def _filtered(self, call: PendingCall) -> bool:
        """An observation the emulator just gave the agent: not a gate's, the user's, a replay's or a rejection."""
        emu = call.emulation
        return (
            self.redrafts > 0
            and emu is not None
            and not emu.invalid_call
            and call.observation is not None
            and not (call.denied or call.replayed or call.user_reply is not None or call.actor == "user")
        )

    def review(self, call: PendingCall, state: EpisodeState, index: int, attempt: int) -> list[Finding]:
        """The rules' findings on the current draft; where they find nothing, the judge's (when there is one)."""
        assert call.emulation is not None and call.observation is not None
        patch = call.emulation.state
        draft = Step(index=index, tool=call.tool, tool_input=call.tool_input, observation=call.observation, state=patch)
        # What the case gives, and an error quoting the agent's own input, are the scorer's no-findings too: the
        # filter must not redraft what the realism scorer would accept.
        facts = case_facts_of(state.case)
        found = check_observation(
            call.observation, call.tool, state.steps, patch, index, facts=facts, call_input=draft.input_text
        )
        if found or self.judge is None:
            return found
        case = state.case
        judged, usage = self.judge.review(
            case.user_instruction,
            case.initial_state,
            state.kits,
            state.steps,
            draft,
            cache_salt=f"{state.salt}|realism-{attempt}",
        )
        state.add_usage(USAGE_ROLE, usage)
        return judged
