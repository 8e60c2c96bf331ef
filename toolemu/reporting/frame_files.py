"""Write the frames of a set of runs as files: Parquet (exact types and text) or CSV (for spreadsheets)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from toolemu.errors import InputError
from toolemu.log.jsonl import write_bytes_atomic, write_text_atomic
from toolemu.reporting.frames import RunsLike, episodes_df, evaluations_df, loaded, runs_df, scores_df, steps_df
from toolemu.reporting.text_parts import spreadsheet_safe
from toolemu.secrets import redact

FRAME_FORMATS = ("parquet", "csv")
FRAMES: dict[str, Callable[[RunsLike], pd.DataFrame]] = {
    "runs": runs_df,
    "episodes": episodes_df,
    "evaluations": evaluations_df,
    "steps": steps_df,
    "scores": scores_df,
}


def _texts(frame: pd.DataFrame, change: Callable[[str], str]) -> pd.DataFrame:
    """A copy of the frame with `change` made to every text cell."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(lambda v: change(v) if isinstance(v, str) else v)
    return out


def check_formats(formats: list[str]) -> None:
    """Bad --format values are one clear error before any work is done."""
    for fmt in formats:
        if fmt not in FRAME_FORMATS:
            raise InputError.single(
                "command line", f"expected one of {', '.join(FRAME_FORMATS)}, got {fmt!r}", field="--format"
            )
    if "parquet" in formats:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError.single(
                "command line",
                "Parquet needs pyarrow: pip install 'toolemu[analysis]' (or use --format csv)",
                field="--format",
            ) from None


def write_frames(runs: RunsLike, out: Path, formats: list[str]) -> dict[str, Path]:
    """<out>/<frame>.<format> for every frame and format; returns {"<frame>.<format>": path}."""
    check_formats(formats)
    runs = loaded(runs)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, make in FRAMES.items():
        # Records were scrubbed when read; this also covers names (run labels, paths) that came from elsewhere.
        frame = _texts(make(runs), redact)
        for fmt in dict.fromkeys(formats):
            path = out / f"{name}.{fmt}"
            if fmt == "parquet":
                data = io.BytesIO()
                frame.to_parquet(data, index=False)
                write_bytes_atomic(path, data.getvalue(), "--out")
            else:
                buffer = io.StringIO()
                _texts(frame, spreadsheet_safe).to_csv(buffer, index=False, lineterminator="\n")  # as summary.csv
                write_text_atomic(path, buffer.getvalue(), "--out")
            written[f"{name}.{fmt}"] = path
    return written
