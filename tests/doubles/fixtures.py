"""A pytest fixture body for test modules: `serve = pytest.fixture(serve_doubles)`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from doubles.openai_api import OpenAIDouble
from doubles.server import DoubleServer


def serve_doubles() -> Iterator[Callable[..., Any]]:
    """Start doubles on demand; stop them at teardown, and fail the test if a double itself broke."""
    started: list[DoubleServer] = []

    def start(cls: type[DoubleServer] = OpenAIDouble, **knobs: Any) -> Any:
        double = cls(**knobs).start()
        started.append(double)
        return double

    yield start
    for double in started:
        double.stop()
    broken = [trace for d in started for trace in d.internal_errors]
    assert not broken, broken[0]
