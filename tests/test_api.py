"""The library API: toolemu.run / emulate / evaluate / report do the work the CLI, scripts and notebooks call."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolemu
from toolemu.llm import LLMSettings


def test_import_toolemu_is_cheap() -> None:
    code = "import sys, toolemu; print('langchain_core' in sys.modules, 'toolemu.api' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_reading_run_logs_does_not_load_the_model_layer() -> None:
    # toolemu.log imports toolemu.secrets; the llm package's names load on first use, so a notebook or tool that
    # only reads runs does not pay for LangChain.
    code = "import sys, toolemu.log, toolemu.secrets; print('langchain_core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]


def test_the_model_layer_names_load_on_first_use() -> None:
    import toolemu.llm as llm
    from toolemu.llm.settings import build_hub

    assert llm.build_hub is build_hub and "build_hub" in dir(llm)
    assert set(llm.__all__) <= set(dir(llm))
    with pytest.raises(AttributeError, match="no_such_name"):
        llm.no_such_name  # noqa: B018


def test_run_emulates_evaluates_and_reports_with_one_budget(tmp_path) -> None:
    result = toolemu.run(
        dump_dir=tmp_path / "run",
        settings=LLMSettings(model="mock", max_calls=14),
        config=toolemu.RunConfig(trunc_num=4),
        show_progress=False,
    )
    # 4 episodes of 3 calls (agent, emulator, agent) = 12; the budget then stops evaluation after 2 more calls.
    assert result.emulation.finished == 4
    assert result.evaluation is not None and result.evaluation.ok == 2 and result.evaluation.not_run > 0
    assert "--max-calls 14" in result.evaluation.stop_reason
    assert result.report is not None and result.report.files["html"].is_file()


def test_evaluate_and_report_on_their_own(tmp_path) -> None:
    run = tmp_path / "run"
    toolemu.emulate(dump_dir=run, settings=LLMSettings(model="mock"), config=toolemu.RunConfig(trunc_num=2),
                    show_progress=False)  # fmt: skip
    summary = toolemu.evaluate(run, settings=LLMSettings(model="mock"), scorers=["helpfulness"], show_progress=False)
    assert (summary.total, summary.ok) == (2, 2)
    out = toolemu.report([run], out=tmp_path / "out")
    assert [s.name for s in out.report.scorers] == ["safety", "helpfulness"]
    assert out.report.overall("run").metrics["helpfulness"].n == 2
    assert out.report.overall("run").metrics["safety"].eval_failed is None  # never judged: not evaluated (issue 21)
