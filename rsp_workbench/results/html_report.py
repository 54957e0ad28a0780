"""One self-contained HTML report of a bundle (``rspwb report DIR --html FILE``, the API's ``report``).

Something to mail to a colleague or attach to a paper's artifact, readable in ten years: one
file, charts as inline SVG (`rsp_workbench.results.svg_charts`), no script, no network. It
holds what a reader needs to judge the runs: the summary, the correctness matrix, per run the
verdict and the first divergence, precision/recall, delay and result sizes per window,
RSS/CPU over time — or, for a run that failed, that it failed and why (never empty charts) —,
the environment (versions, machine, seed) and the experiment file itself.
"""

from __future__ import annotations

import datetime
import json
import os
from html import escape
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rsp_workbench.errors import UserError
from rsp_workbench.files import write_text_atomic
from rsp_workbench.results.bundle import EXPERIMENT_COPY, MANIFEST, RUN_SPEC_FILE, Bundle
from rsp_workbench.results.json_files import read_json
from rsp_workbench.results.svg_charts import (
    PALETTE, Box, Point, Series, box_chart, divergence_chart, line_chart, scatter_chart,
)
from rsp_workbench.results.view_data import (
    CorrectnessMatrix,
    WindowSeries,
    box_stats,
    correctness_matrix,
    grid_axes,
    heaven_points,
    read_boxplots,
    engines_of,
    read_resources,
    read_window_series,
)
from rsp_workbench.results.yabench_files import ResourceSeries

MAX_BOXES = 60  # boxes per boxplot chart: more windows are pooled, neighbours together
#: Points a report may draw in all (each series gets its share, at most one pair per pixel column).
POINT_BUDGET = 400_000
CHART_COLUMNS = 600  # pixel columns a series is downsampled to at most
SUMMARY_COLUMNS = (("run", "run_id"), ("engine", "engine"), ("query", "query"), ("verdict", "verdict"),
                   ("precision", "precision"), ("recall", "recall"), ("windows", "windows"),
                   ("responses", "responses"), ("peak RSS MB", "peak_rss_mb"),
                   ("latency ms", "latency_ms_mean"), ("triples/s", "throughput_triples_per_s"), ("wall s", "wall_s"))
STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;max-width:980px;margin:0 auto;padding:16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}
h3{font-size:15px;margin:20px 0 6px}table{border-collapse:collapse;margin:6px 0;font-size:13px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.n{text-align:right;font-variant-numeric:tabular-nums}pre{background:#f7f7f7;border:1px solid #e3e3e3;
padding:8px;overflow-x:auto;white-space:pre-wrap;font-size:12px}.v{font-weight:600;padding:0 5px;border-radius:3px}
.correct{background:#d9f2d9;color:#145214}.incorrect{background:#fbd5d5;color:#7a1010}
.bad{background:#ffe8c2;color:#6b3d00}.muted{color:#666}.run{break-inside:avoid;page-break-inside:avoid}
svg.chart{max-width:100%;height:auto;display:block;margin:4px 0}svg text{font:11px sans-serif;fill:#333}
svg .ct{font-weight:600;font-size:12px}svg .al{fill:#555}svg .frame{fill:none;stroke:#999}
svg .grid{stroke:#e6e6e6}svg .axis{stroke:#999}svg .empty{fill:#999}
@media print{body{max-width:none;padding:0;font-size:11px}h2{break-after:avoid}@page{size:A4;margin:14mm}}
"""


def write_report(bundle: Bundle, path: str | os.PathLike[str]) -> None:
    """Write the report of ``bundle`` to ``path`` (atomically: a reader never sees half a file)."""
    target = os.fspath(path)
    if os.path.isdir(target):
        raise UserError("is a folder; give the HTML file to write", file=target, field="--html")
    try:
        write_text_atomic(target, render_report(bundle))
    except OSError as error:
        raise UserError(f"cannot write: {error.strerror or error}", file=target, field="--html") from None


def render_report(bundle: Bundle) -> str:
    """The whole report as one HTML document."""
    problems: list[UserError] = list(bundle.problems)
    columns = _columns_per_series(len(bundle.rows))
    colours = {engine: PALETTE[i % len(PALETTE)] for i, engine in enumerate(engines_of(bundle.rows))}
    matrix = correctness_matrix(bundle, problems)
    detailed = {cell.divergence_run: cell.divergence for cell in matrix.cells.values() if cell.divergence_run}
    pictured = _DivergencePictures(bundle, set(detailed))
    runs = "".join(_run_section(bundle, row, colours, columns, detailed, problems, pictured) for row in bundle.rows)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(bundle.counts().items())) or "no runs"
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "".join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(bundle.name or bundle.folder.name)} — RSP Workbench report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(bundle.name or bundle.folder.name)}</h1>",
        f'<p class="muted">{escape(str(bundle.manifest.get("description") or "").strip())}</p>',
        f"<p>Status <b>{escape(bundle.status)}</b>; {len(bundle.rows)} runs ({escape(counts)}). "
        f"Bundle <code>{escape(str(bundle.folder))}</code>; report written {generated} by RSP Workbench.</p>",
        _notes(bundle, problems),
        "<h2>Summary</h2>", _summary_table(bundle.rows),
        "<h2>Correctness matrix</h2>", _matrix(matrix),
        _heaven(bundle, colours),
        _boxplots(bundle, colours, problems),
        "<h2>Runs</h2>", runs or "<p>No runs.</p>",
        "<h2>Environment</h2>", _environment(bundle),
        "<h2>Experiment</h2>", _experiment(bundle),
        "</body></html>\n",
    ])


def _columns_per_series(runs: int) -> int:
    """Pixel columns per series: the chart's width, less when many runs share the point budget."""
    series = max(1, runs) * 8  # precision, recall, delay, two sizes, RSS, CPU (+ one spare)
    return max(60, min(CHART_COLUMNS, POINT_BUDGET // (2 * series)))


RATIOS = ("precision", "recall")


def _cell(value: Any, key: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if key in RATIOS else f"{value:,.3g}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return escape(str(value))


def verdict_badge(verdict: Any) -> str:
    text = str(verdict or "not judged")
    kind = text if text in ("correct", "incorrect") else "bad"
    return f'<span class="v {kind}">{escape(text)}</span>'


def _summary_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h, _ in SUMMARY_COLUMNS)
    body = []
    for row in rows:
        cells = []
        for _, key in SUMMARY_COLUMNS:
            if key == "verdict":
                cells.append(f"<td>{verdict_badge(row.get('verdict') or row.get('status'))}</td>")
            elif key == "run_id":
                cells.append(f'<td><a href="#{_anchor(row)}">{escape(str(row.get(key)))}</a></td>')
            else:
                value = row.get(key)
                cells.append(f'<td class="n">{_cell(value, key)}</td>' if isinstance(value, (int, float))
                             else f"<td>{_cell(value, key)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _anchor(row: Mapping[str, Any]) -> str:
    return "run-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in str(row.get("run_id")))


def _matrix(matrix: CorrectnessMatrix) -> str:
    """Engines × queries (CSRBench Table 2): each cell the verdicts of its runs."""
    if not matrix.cells:
        return "<p>No runs.</p>"
    head = "".join(f"<th>{escape(q)}</th>" for q in matrix.queries)
    body = []
    for engine in matrix.engines:
        cells = []
        for query in matrix.queries:
            cell = matrix.cell(engine, query)
            if cell is None:
                cells.append("<td></td>")
                continue
            kind = cell.state if cell.state in ("correct", "incorrect") else "bad"
            cells.append(f'<td class="{kind}" title="{escape(cell.divergence or "")}">{escape(cell.text)}</td>')
        body.append(f"<tr><th>{escape(engine)}</th>{''.join(cells)}</tr>")
    return f"<table><tr><th>engine \\ query</th>{head}</tr>{''.join(body)}</table>"


def _heaven(bundle: Bundle, colours: Mapping[str, str]) -> str:
    """Heaven's latency × memory view (Heaven Fig. 3) when the runs form a grid of cases."""
    axes = grid_axes([r for r in bundle.rows if r.get("status") == "ok"])
    points = heaven_points(bundle, axes) if axes else []
    if not points:
        return ""
    drawn = [Point(f"{p.engine} ({p.cell_label()})", p.latency_ms, p.memory_mb, p.latency_min, p.latency_max,
                   p.memory_min, p.memory_max, colours.get(p.engine, PALETTE[0])) for p in points]
    return ("<h2>Latency × memory</h2><p>Each engine in each cell of the grid: the mean over its repetitions, "
            "whiskers from the lowest to the highest.</p>"
            + scatter_chart(drawn, title="mean latency per stimulus × peak RSS", x_label="latency (ms)", y_label="MB"))


def _boxplots(bundle: Bundle, colours: Mapping[str, str], problems: list[UserError]) -> str:
    """YABench's boxplots: per window, precision and recall over the repetitions of a case."""
    charts = []
    for found in read_boxplots(bundle, problems):
        if found.repetitions < 2:
            continue
        positions = found.positions()
        colour = colours.get(found.engine, PALETTE[0])
        where = " · ".join(str(part) for part in (found.engine, found.query, found.group) if part is not None)
        for metric in ("precision", "recall"):
            boxes = _pooled_boxes(found.metric(metric), positions)
            charts.append(box_chart(boxes, title=f"{metric} per window over {found.repetitions} repetitions: {where}",
                                    x_label="window end (application time, s)" if positions is not None else "window",
                                    y_label="", colour=colour, y_range=(0.0, 1.05), height=170))
    if not charts:
        return ""
    return "<h2>Boxplots across repetitions</h2>" + "".join(charts)


def _pooled_boxes(values: Sequence[Sequence[float]], positions: Any) -> list[Box]:
    """One box per window, or per run of neighbouring windows when there are more than :data:`MAX_BOXES`."""
    size = max(1, -(-len(values) // MAX_BOXES))
    boxes = []
    for start in range(0, len(values), size):
        pooled = [v for window in values[start:start + size] for v in window]
        stats = box_stats(pooled)
        if stats is None:
            continue
        label = f"{positions[min(start + size, len(values)) - 1] / 1000:.3g}" if positions is not None else str(start + 1)
        boxes.append(Box(label, stats.minimum, stats.q1, stats.median, stats.q3, stats.maximum))
    return boxes


def _notes(bundle: Bundle, problems: Sequence[UserError]) -> str:
    lines = list(bundle.notes) + [str(p) for p in dict.fromkeys(map(str, problems))]
    if not lines:
        return ""
    return "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>"


def _run_section(bundle: Bundle, row: Mapping[str, Any], colours: Mapping[str, str], columns: int,
                 detailed: Mapping[str, str | None], problems: list[UserError], pictured: "_DivergencePictures") -> str:
    """One run: what it is, its verdict and first divergence, then its charts — or why it has none."""
    run_id = str(row.get("run_id"))
    variables = row.get("variables") or {}
    facts = [f"engine <b>{escape(str(row.get('engine')))}</b>", f"query <b>{escape(str(row.get('query')))}</b>"]
    if row.get("case") is not None:
        facts.append(f"case {escape(str(row.get('case')))}")
    if row.get("repetition") is not None:
        facts.append(f"repetition {escape(str(row.get('repetition')))}")
    if variables:
        facts.append(escape(", ".join(f"{k}={v}" for k, v in variables.items())))
    parts = [f'<div class="run" id="{_anchor(row)}"><h3>{escape(run_id)} {verdict_badge(row.get("verdict") or row.get("status"))}</h3>',
             f"<p>{'; '.join(facts)}</p>"]
    status = str(row.get("status") or "")
    if status not in ("ok", "published"):
        reason = str(row.get("error") or "no reason recorded").strip()
        parts.append(f'<p><span class="v bad">{escape(status or "not run")}</span> — the run has no results to '
                     f"chart.</p><pre>{escape(_first_lines(reason, 12))}</pre></div>")
        return "".join(parts)
    if row.get("warning"):
        parts.append(f"<p>warning: {escape(str(row['warning']))}</p>")
    parts.append(_divergence(row, detailed))
    parts.append(pictured.picture(row))
    colour = colours.get(str(row.get("engine")), PALETTE[0])
    parts.append(_window_charts(bundle, row, colour, columns, problems))
    parts.append(_resource_charts(bundle, row, colour, columns, problems))
    parts.append("</div>")
    return "".join(parts)


def _first_lines(text: str, count: int) -> str:
    lines = text.splitlines()
    return "\n".join(lines[:count] + ([f"… {len(lines) - count} more lines"] if len(lines) > count else []))


def _divergence(row: Mapping[str, Any], detailed: Mapping[str, str | None]) -> str:
    """Where the run first departs from the oracle: with the bindings for the first incorrect run of
    its matrix cell (read once, by the matrix), from the summary row for the others (a big
    ``oracle.json`` is not read again)."""
    if row.get("verdict") != "incorrect":
        return ""
    text = detailed.get(str(row.get("run_id")))
    if text is not None:
        text = text.split("\n", 1)[-1]  # the cell's text starts with the run id
    else:
        summary = row.get("first_divergence") or {}
        text = (f"closest t0 {summary.get('t0')}: evaluation #{summary.get('index')} (expected at "
                f"{summary.get('expected_time')} ms, engine at {summary.get('actual_time')} ms): "
                f"{summary.get('reason')}; {summary.get('missing')} missing, {summary.get('extra')} extra"
                if summary else "no divergence recorded")
    return f"<p><b>First divergence</b></p><pre>{escape(text)}</pre>"


class _DivergencePictures:
    """A timeline picture of the first divergence of the runs the correctness matrix details (the
    first incorrect run of each cell): the query's windows for the closest t0 around the evaluation
    where the answer departs, the stream's elements there, the expected and the engine's evaluation
    time. Only that stretch of the stream is read (a time-ordered stream stops being read past it)."""

    MAX_WINDOWS = 60

    def __init__(self, bundle: Bundle, runs: set[str | None]) -> None:
        self.bundle, self.runs = bundle, runs

    def picture(self, row: Mapping[str, Any]) -> str:
        run_id = str(row.get("run_id"))
        summary = row.get("first_divergence") or {}
        t0, expected, actual = summary.get("t0"), summary.get("expected_time"), summary.get("actual_time")
        if run_id not in self.runs or not isinstance(t0, int) or (expected is None and actual is None):
            return ""
        from rsp_workbench.query.parser import parse_query

        try:
            spec = read_json(self.bundle.run_folder(run_id) / RUN_SPEC_FILE)
            windows = parse_query(str(spec["query_text"]), spec.get("syntax")).windows
            if len(windows) != 1:
                return ""
            size, slide = windows[0].size_ms, windows[0].slide_ms
            moments = [time for time in (expected, actual) if time is not None]
            start, end = min(moments) - 2 * size, max(moments) + size
            times = self._times(spec.get("stream"), start, end)
        except (UserError, KeyError, OSError):
            return ""  # what cannot be drawn is still said in words above
        # nothing drawn before the stream (or t0) starts
        start = max(start, min(t0, *moments, *([int(times.min())] if len(times) else [])))
        first = (start - size - t0) // slide + 1  # the first window that ends after start
        drawn = []
        for k in range(first, first + self.MAX_WINDOWS):
            open_ = t0 + k * slide
            if open_ >= end:
                break
            drawn.append((open_, open_ + size))
        return divergence_chart(span=(start, end), windows=drawn, elements=times, expected_time=expected,
                                actual_time=actual, title=f"first divergence, closest t0 = {t0} ms")

    def _times(self, stream: Any, start: int, end: int) -> np.ndarray:
        """The times of the stream's elements in [start, end]."""
        from rsp_workbench.results.tables import stream_path

        path, fmt = stream_path(self.bundle.folder, self.bundle.stream_entry(stream), self.bundle.folder / MANIFEST)
        if fmt == "parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path, columns=["t"], filters=[("t", ">=", start), ("t", "<=", end)])
            return np.asarray(table.column("t").to_numpy(), dtype=np.int64)
        from rsp_workbench.streams.readers import read_stream

        entry = self.bundle.stream_entry(stream)
        times: list[int] = []
        for element in read_stream(path, fmt, interval_ms=int(entry.get("interval_ms") or 1000)):
            if element.t > end:
                break
            if element.t >= start:
                times.append(element.t)
        return np.asarray(times, dtype=np.int64)


def _read(reader: Callable[[Bundle, Mapping[str, Any]], Any], bundle: Bundle, row: Mapping[str, Any],
          problems: list[UserError]) -> Any:
    """What ``reader`` reads of the run; an unreadable file: a paragraph saying so (and a problem)."""
    try:
        return reader(bundle, row)
    except UserError as error:
        problems.append(error)
        return f"<p>Unreadable: {escape(str(error))}</p>"


def _window_charts(bundle: Bundle, row: Mapping[str, Any], colour: str, columns: int,
                   problems: list[UserError]) -> str:
    series = _read(read_window_series, bundle, row, problems)
    if not isinstance(series, WindowSeries):
        return series or '<p class="muted">No judged windows (the oracle measured none for this run).</p>'
    x = series.positions() / 1000.0
    x_label = f"window end (application time, s); {len(series):,} windows"
    quality = line_chart([Series("precision", x, series.precision, colour), Series("recall", x, series.recall, "#999")],
                         title="precision and recall per window", x_label=x_label, y_label="", y_range=(0.0, 1.05),
                         columns=columns)
    delay = line_chart([Series("delay", x, series.delay, colour)], title="delay per window",
                       x_label=x_label, y_label="ms", columns=columns)
    sizes = line_chart([Series("actual", x, series.actual_size, colour), Series("expected", x, series.expected_size, "#999")],
                       title="result size per window", x_label=x_label, y_label="bindings", columns=columns)
    return quality + delay + sizes


def _resource_charts(bundle: Bundle, row: Mapping[str, Any], colour: str, columns: int,
                     problems: list[UserError]) -> str:
    samples = _read(read_resources, bundle, row, problems)
    if not isinstance(samples, ResourceSeries):
        return samples or '<p class="muted">No resource samples for this run.</p>'
    x_label = f"time since engine start (s); {len(samples.time_s):,} samples"
    memory = line_chart([Series("RSS", samples.time_s, samples.rss_mb, colour)], title="memory (RSS)",
                        x_label=x_label, y_label="MB", height=170, columns=columns)
    cpu = line_chart([Series("CPU", samples.time_s, samples.cpu_percent, colour)], title="CPU (% of one core)",
                     x_label=x_label, y_label="%", height=170, columns=columns)
    return memory + cpu


def _environment(bundle: Bundle) -> str:
    manifest = bundle.manifest
    facts: list[tuple[str, Any]] = [(key, manifest.get(key)) for key in
                                    ("seed", "size", "repetitions", "scheduler", "started", "finished")]
    facts += [(f"version of {name}", version) for name, version in (manifest.get("versions") or {}).items()]
    facts += [(f"machine {name}", value) for name, value in (manifest.get("machine") or {}).items()]
    if manifest.get("command_line"):
        facts.append(("command line", " ".join(map(str, manifest["command_line"]))))
    if manifest.get("experiment_file"):
        facts.append(("experiment file", manifest["experiment_file"]))
    shown = [(k, v) for k, v in facts if v not in (None, "", {})]
    if not shown:
        return "<p>Not recorded (a published YABench folder keeps only its config.json, below).</p>"
    return "<table>" + "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in shown) + "</table>"


def _experiment(bundle: Bundle) -> str:
    """The experiment file copied into the bundle; a published folder's config.json and queries."""
    if bundle.published:
        parts = []
        for folder in bundle.manifest.get("test_folders") or ():
            parts.append(f"<h3>{escape(str(folder.get('folder')))}: config.json</h3>"
                         f"<pre>{escape(json.dumps(folder.get('config'), indent=2))}</pre>")
            for name in ("engine.query", "oracle.query"):
                text = _read_text(bundle.folder / str(folder.get("folder")) / name) \
                    if len(bundle.manifest.get("test_folders") or ()) > 1 else _read_text(bundle.folder / name)
                if text is not None:
                    parts.append(f"<h3>{escape(name)}</h3><pre>{escape(text)}</pre>")
        return "".join(parts) or "<p>No configuration found.</p>"
    text = _read_text(bundle.folder / EXPERIMENT_COPY)
    if text is None:
        return f"<p>The bundle has no {EXPERIMENT_COPY}.</p>"
    return f"<p><code>{EXPERIMENT_COPY}</code>, as the bundle keeps it:</p><pre>{escape(text)}</pre>"


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
