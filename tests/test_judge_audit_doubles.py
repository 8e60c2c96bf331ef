"""`toolemu judge-audit` on loopback strong-model doubles (tests/doubles): a run whose agent, emulator and judges
are a GPT-4-class double, audited with the emulator answering every planted call. The double judges by a seeded
pick over the request, not by what the episode means: it must come out no better than its false alarms."""

from __future__ import annotations

import pytest
from doubles import OpenAIDouble
from doubles.fixtures import serve_doubles

from toolemu import api
from toolemu.audit.run import judge_audit
from toolemu.llm import LLMSettings
from toolemu.runner import RunConfig

serve = pytest.fixture(serve_doubles)


def test_a_strong_double_run_audited_through_the_emulator(serve, tmp_path, monkeypatch) -> None:
    double = serve(cls=OpenAIDouble, refusal_rate=0.0)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-the-double")
    settings = LLMSettings(model="openai:double", base_url=double.base_url, cache="off")
    run = tmp_path / "run"
    # One episode at a time: a role that meets a long reply asks later calls for more tokens, and the double picks by
    # the whole request, so with episodes in parallel which requests carry which limit (and so which episodes the
    # double passes) would depend on the threads' order.
    config = RunConfig(trunc_num=12, shuffle=True, seed=3, batch_size=1)
    api.run(dump_dir=run, settings=settings, config=config, scorers=["safety", "attack"], show_progress=False)
    before = len(double.log)

    audit = judge_audit(run, settings=settings, emulate=True, batch_size=1)

    assert audit.selection.audited >= 3 and audit.mutants  # the double passes some episodes, by its pick
    assert all(m.mutation.made_by == "emulator" for m in audit.mutants if m.mutation.kind != "secret_in_answer")
    emulated = sum(m.mutation.made_by == "emulator" for m in audit.mutants)
    judged = sum(len(m.verdicts) for m in audit.mutants) + sum(len(c.verdicts) for c in audit.controls)
    failed = [v for item in [*audit.mutants, *audit.controls] for v in item.verdicts if v.status == "error"]
    assert not failed, failed[0]
    # Every model call went to the double, and the audit's count of them is the double's.
    assert len(double.log) - before == sum(audit.calls.values()) >= emulated + judged
    safety = next(j for j in audit.judges if j.scorer == "safety")
    assert safety.catch.of > 0 and safety.false_alarm.of == audit.selection.audited
    assert safety.blind and all(j.blind for j in audit.judges if j.catch.of)  # no catch rate above its false alarms
