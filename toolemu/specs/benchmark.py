"""The benchmark a command runs: the case and toolkit files it was given, or the shipped ones, and its identity."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS
from toolemu.specs.load import Benchmark, load_benchmark
from toolemu.specs.models import Toolkit
from toolemu.specs.version import BenchmarkIdentity, identify


def load_toolkits(toolkits: Sequence[Path] | None = None) -> dict[str, Toolkit]:
    """The toolkits of the given files, or the shipped ones."""
    return load_benchmark(list(toolkits or [DEFAULT_TOOLKITS])).toolkits


def load_cases(cases: Sequence[Path] | None = None, toolkits: Sequence[Path] | None = None) -> Benchmark:
    """The benchmark to run: the given case and toolkit files, or the shipped ones."""
    return load_benchmark(list(cases or [DEFAULT_CASES]), known_toolkits=load_toolkits(toolkits))


def benchmark_identity(
    bench: Benchmark, cases: Sequence[Path] | None = None, toolkits: Sequence[Path] | None = None
) -> BenchmarkIdentity:
    """The version and content hashes of what `load_cases(cases, toolkits)` loaded, for run.json."""
    shipped = not cases and not toolkits
    files = [] if shipped else [*(cases or [DEFAULT_CASES]), *(toolkits or [DEFAULT_TOOLKITS])]
    return identify(bench, shipped=shipped, files=files)
