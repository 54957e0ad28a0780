"""A bundle's files as Arrow tables: what `rsp_workbench.results.bundle.Bundle`'s table methods return.

Arrow because notebooks want columns (``.to_pandas()`` when pandas is installed) and big runs
must not become millions of Python objects: a run's windows and a stream are Parquet files read
straight by pyarrow (``oracle.json``'s windows, in bundles written before ``windows.parquet``, as
columns: `rsp_workbench.results.oracle_file.read_oracle`).
Imported only when a table is asked for, so that opening a bundle stays cheap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pyarrow as pa

from rsp_workbench.errors import UserError
from rsp_workbench.results.oracle_file import ColumnKind, read_oracle
from rsp_workbench.results.windows_file import read_windows
from rsp_workbench.results.yabench_files import parse_oracle, parse_performance

#: ``oracle.json``'s per-window numbers, as the windows table has them (``start``/``end`` as int64 ms;
#: ``delay`` null where the engine did not report the window).
WINDOW_COLUMNS: Mapping[str, ColumnKind] = {
    "start": "number", "end": "number", "precision": "number", "recall": "number", "actual_size": "number",
    "expected_size": "number", "window_triples": "number", "delay": "optional",
}
#: Whole numbers (ms, counts): int64 in the table when every window has one.
WHOLE_COLUMNS = ("start", "end", "actual_size", "expected_size", "window_triples")
STREAM_COLUMNS = ("subject", "predicate", "object", "graph", "t")
KPI_COLUMNS = ("time_s", "rss_mb", "cpu_percent", "threads")


def rows_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Summary rows as a table; nested values (``variables``, ``first_divergence``) as JSON text, so
    that runs with different variables still share one schema."""
    records = [{key: (json.dumps(value, sort_keys=True) if isinstance(value, (Mapping, list, tuple)) else value)
                for key, value in row.items()} for row in rows]
    keys = list(dict.fromkeys(key for record in records for key in record))
    return pa.table({key: _column([record.get(key) for record in records]) for key in keys})


def _column(values: list[Any]) -> pa.Array:
    """One column; values of mixed kinds (a number here, text there) become text."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if value is None else str(value) for value in values], type=pa.string())


def windows_table(windows_file: Path, oracle_file: Path) -> pa.Table:
    """A run's judged windows: its ``windows.parquet``, else (a bundle written before there was one)
    the windows of its ``oracle.json``; neither file: a run the oracle did not judge, an empty table."""
    if windows_file.is_file():
        return read_windows(windows_file, list(WINDOW_COLUMNS))
    if not oracle_file.is_file():
        return _empty_windows()
    found = read_oracle(oracle_file, WINDOW_COLUMNS)  # the columns only: a content-change run has millions
    if not found.window_count:
        return _empty_windows()
    return _windows(found.columns)


def published_windows_table(oracle_file: Path) -> pa.Table:
    """The windows of a published ``ORACLE_<test><n>`` file (YABench's eight columns)."""
    try:
        lines = parse_oracle(oracle_file.read_text(encoding="utf-8"), file=str(oracle_file))
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"cannot read: {error}", file=str(oracle_file)) from None
    return _windows(lines.columns) if len(lines) else _empty_windows()


def _windows(columns: Mapping[str, np.ndarray]) -> pa.Table:
    def column(key: str) -> np.ndarray:
        values = columns[key].astype(float, copy=False)
        return values.astype(np.int64) if key in WHOLE_COLUMNS and np.isfinite(values).all() else values

    # ``delay`` NaN (the engine did not report the window) is null in Arrow, NaN again in numpy/pandas
    return pa.table({key: pa.array(column(key), from_pandas=WINDOW_COLUMNS[key] == "optional") for key in WINDOW_COLUMNS})


def _empty_windows() -> pa.Table:
    return _windows({key: np.zeros(0) for key in WINDOW_COLUMNS})


def responses_table(log_file: Path) -> pa.Table:
    """``responses.jsonl`` as one row per binding: ``response`` (its index), ``application_time``,
    ``system_time`` (ms), ``operation``, then one column per variable; an empty response (an
    empty-relation notification) is one row whose variables are null."""
    from rsp_workbench.responses.readers import read_response_log

    if not log_file.is_file():
        raise UserError("the run has no response log", file=str(log_file))
    log = read_response_log(log_file)
    variables = list(log.variables)
    columns: dict[str, list[Any]] = {name: [] for name in ("response", "application_time", "system_time", "operation")}
    values: dict[str, list[Any]] = {name: [] for name in variables}
    for index, response in enumerate(log.responses):
        for binding in response.bindings or (frozenset(),):
            terms = dict(binding)
            columns["response"].append(index)
            columns["application_time"].append(response.application_time)
            columns["system_time"].append(response.system_time)
            columns["operation"].append(response.operation)
            for name in variables:
                values[name].append(terms.get(name))
    return pa.table({
        "response": pa.array(columns["response"], type=pa.int64()),
        "application_time": pa.array(columns["application_time"], type=pa.int64()),
        "system_time": pa.array(columns["system_time"], type=pa.int64()),
        "operation": pa.array(columns["operation"], type=pa.string()),
        **{name: pa.array(values[name], type=pa.string()) for name in variables},
    })


def stream_path(root: Path, entry: Mapping[str, Any], manifest_file: Path) -> tuple[Path, str]:
    """The file and format of a manifest ``streams`` entry (a relative path is the bundle's)."""
    raw, fmt = entry.get("path"), entry.get("format")
    for key, value in (("path", raw), ("format", fmt)):
        if not isinstance(value, str) or not value:
            raise UserError("missing field", file=str(manifest_file), field=f"streams.{key}")
    path = Path(str(raw))
    path = path if path.is_absolute() else root / path
    if not path.exists():
        raise UserError("the run's stream file is missing", file=str(path))
    return path, str(fmt)


def stream_table(root: Path, entry: Mapping[str, Any], manifest_file: Path) -> pa.Table:
    """A stream of the bundle: Parquet read as it is, any other format through the stream readers."""
    path, fmt = stream_path(root, entry, manifest_file)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path, columns=list(STREAM_COLUMNS))
        except (OSError, pa.ArrowInvalid) as error:
            raise UserError(f"not a stream in the workbench's Parquet format: {error}", file=str(path)) from None
    from rsp_workbench.streams.readers import read_stream

    elements = list(read_stream(path, fmt, interval_ms=int(entry.get("interval_ms") or 1000)))
    return pa.table({
        "subject": pa.array([e.subject for e in elements], type=pa.string()),
        "predicate": pa.array([e.predicate for e in elements], type=pa.string()),
        "object": pa.array([e.object for e in elements], type=pa.string()),
        "graph": pa.array([e.graph for e in elements], type=pa.string()),
        "t": pa.array([e.t for e in elements], type=pa.int64()),
    })


def kpis_table(performance_file: Path | None, run: str) -> pa.Table:
    """A run's resource samples (``P_*``); no file: an empty table (the run sampled nothing)."""
    if performance_file is None:
        return pa.table({key: pa.array([], type=pa.float64()) for key in KPI_COLUMNS})
    try:
        text = performance_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"cannot read: {error}", file=str(performance_file)) from None
    samples = parse_performance(text, run_id=run, file=str(performance_file))
    return pa.table({key: getattr(samples, key) for key in KPI_COLUMNS})
