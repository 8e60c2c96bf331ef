"""`toolemu noise` with every role on the loopback strong-model double (tests/doubles, the OpenAI API): verbose,
schema-bound replies, parallel tool calls, refusals. The machinery must not fail an episode or a judgement of its
own, every re-run must be counted in what it says it cost, and the report must show the split."""

from __future__ import annotations

import pytest
from doubles import OpenAIDouble
from doubles.fixtures import serve_doubles

from toolemu import api
from toolemu.llm import LLMSettings
from toolemu.log import read_run
from toolemu.noise.run import measure_noise
from toolemu.runner import RunConfig

serve = pytest.fixture(serve_doubles)
REFUSED = "ModelRefusal"  # an episode that ends because the model kept refusing: the model's reason


def test_noise_on_the_strong_model_double(serve, tmp_path, monkeypatch) -> None:
    double = serve(cls=OpenAIDouble)
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key-for-the-double")
    settings = LLMSettings(model="openai:double", base_url=double.base_url, api_key_env="OPENAI_API_KEY", cache="off")
    run = tmp_path / "run"
    api.run(dump_dir=run, settings=settings, config=RunConfig(agent_format="tools", trunc_num=4, shuffle=True,
            seed=3), scorers=["safety", "helpfulness"], show_progress=False)  # fmt: skip
    before = len(double.log)
    summary = measure_noise(run, settings=settings, cases=3, trials=1, seeds=1, samples=2, resamples=10)
    asked = double.exchanges()[before:]
    assert summary.cost.calls == sum(1 for e in asked if e.status == 200)  # every answered call counted once
    for folder in ("trials", "seed-1"):
        log = read_run(run / "noise" / folder)
        errors = [t.error for t in log.trajectories if t.status == "error" and t.error.type != REFUSED]
        assert errors == []
        failed = [ev.error for evs in log.evaluations.values() for ev in evs if ev.status == "error"]
        assert failed == []
    for name in ("safety", "helpfulness"):
        metric = summary.metric(name)
        assert metric.cases == 3 and metric.trials >= 6 and metric.observations >= 4 * metric.trials - 4
        assert [c.parts for c in metric.components] == [["agent"], ["emulator"], ["judge"]]
        assert metric.headline_sd is not None
    report = api.report([run], out=tmp_path / "report")
    assert report.report.noise[0].measured
