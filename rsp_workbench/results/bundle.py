"""The result bundle: one folder per experiment run (layout: docs/result-bundle.md).

Pure reading and writing (no Spark, no Qt, no engine processes), shared by
``rspwb run``, ``rspwb report`` and the GUI. Every file is written as ``NAME.partial`` and
renamed when complete, and ``manifest.json``'s ``status`` is updated last, so a bundle
whose writer crashed or was cancelled never holds a file that looks complete but is not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.files import json_safe
from rsp_workbench.results.json_files import read_json
from rsp_workbench.results.oracle_file import read_oracle

if TYPE_CHECKING:
    import pyarrow as pa

    from rsp_workbench.experiment.model import Experiment

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
EXPERIMENT_COPY = "experiment.yaml"
STREAMS_DIR = "streams"
RUNS_DIR = "runs"
YABENCH_DIR = "yabench"
ORACLE_FILE = "oracle.json"
#: The per-window quality of ``oracle.json`` as Parquet (`rsp_workbench.results.windows_file`).
WINDOWS_FILE = "windows.parquet"
RUN_FILE = "run.json"
BUNDLE_STATUSES = ("running", "ok", "failed", "cancelled")
BUNDLE_FORMAT = "rspwb-result-bundle/1"
RUN_SPEC_FILE = "run-spec.json"
RESPONSES_FILE = "responses.jsonl"
#: ``manifest["format"]`` of a published YABench folder read as a bundle (rsp_workbench.results.published).
PUBLISHED_FORMAT = "yabench-test-folder"

def run_folder(root: Path, run_id: Any, *, file: Path, field: str) -> Path:
    """``runs/<run_id>`` of the bundle at ``root``; a `UserError` naming ``file`` and ``field`` if the
    id is not one plain folder name or the folder leads outside the bundle (a symbolic link).

    A bundle is untrusted input (it may come from anyone): its run ids never make the
    workbench read, or report on, anything outside it."""
    if (not isinstance(run_id, str) or run_id in ("", ".", "..") or len(run_id) > 255
            or any(c in run_id for c in "/\\\0")):
        raise UserError(f"run id {_token(run_id)} is not a folder name inside the bundle; refused",
                        file=str(file), field=field)
    folder = root / RUNS_DIR / run_id
    if not inside_bundle(root, folder):
        raise UserError(f"{RUNS_DIR}/{run_id} leads outside the bundle (a symbolic link); refused",
                        file=str(file), field=field)
    return folder


def read_experiment_copy(root: Path, manifest: Mapping[str, Any]) -> "Experiment":
    """The experiment a bundle ran: its ``experiment.yaml`` copy, relative paths resolved from the folder
    of the file that was run (``manifest["experiment_file"]``; the copy keeps them as written), else
    from the bundle. A `UserError` naming the copy when there is none or it does not validate."""
    from rsp_workbench.experiment.loader import loads_experiment

    copy = root / EXPERIMENT_COPY
    original = manifest.get("experiment_file")
    base = Path(original).parent if isinstance(original, str) and Path(original).parent.is_dir() else root
    try:
        text = copy.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"the bundle holds no {EXPERIMENT_COPY} (the experiment it ran)", file=str(root)) from None
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise UserError(f"cannot read the experiment copy: {reason}", file=str(copy)) from None
    return loads_experiment(text, file=copy, base_dir=base)


def inside_bundle(root: Path, path: Path) -> bool:
    """Whether ``path``, with every symbolic link followed, lies inside the bundle folder ``root``."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a link loop
        return False


def _token(value: Any, limit: int = 60) -> str:
    """A value from a bundle file as an error quotes it: JSON text, cut short."""
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Columns of the summary table (header, row key, width).
TABLE_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("run", "run_id", 0),
    ("engine", "engine", 0),
    ("query", "query", 0),
    ("verdict", "verdict", 9),
    ("precision", "precision", 9),
    ("recall", "recall", 6),
    ("responses", "responses", 9),
    ("peak RSS MB", "peak_rss_mb", 11),
)


@dataclass(frozen=True)
class Bundle:
    """One result bundle, own (``rspwb run``) or a published YABench folder read as one.

    The summary rows of its runs are read when it is opened (`rsp_workbench.results.reader.open_bundle`);
    a run's tables — windows, responses, stream, KPI samples — only when asked, as Arrow tables
    (xarray's ``open_dataset`` is the model: cheap to open, columns read on demand)."""

    folder: Path
    name: str
    status: str
    rows: tuple[Mapping[str, Any], ...]
    manifest: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what is missing or unusual (a published folder's absent files, a stopped writer)
    problems: tuple[UserError, ...] = ()  # files that could not be read, located

    @property
    def published(self) -> bool:
        """A published YABench folder read as a bundle (read-only; no streams or responses)."""
        return self.manifest.get("format") == PUBLISHED_FORMAT

    def row(self, run: str) -> Mapping[str, Any]:
        """The summary row of run ``run`` (its ``run_id``); a `UserError` naming the bundle if there is none."""
        found = next((r for r in self.rows if r.get("run_id") == run), None)
        if found is None:
            raise UserError(f"no run {_token(run)} in this bundle", file=str(self.folder), field="run")
        return found

    def run_folder(self, run_id: str) -> Path:
        """``runs/<run_id>``, never outside the bundle (`run_folder`)."""
        return run_folder(self.folder, run_id, file=self.folder / MANIFEST, field="runs.run_id")

    def experiment(self) -> "Experiment":
        """The experiment this bundle ran (`read_experiment_copy`); a published folder holds none."""
        if self.published:
            raise UserError("a published YABench folder holds no experiment file", file=str(self.folder))
        return read_experiment_copy(self.folder, self.manifest)

    def runs(self) -> "pa.Table":
        """One row per run: the ``rspwb report --json`` fields (nested values as JSON text)."""
        from rsp_workbench.results.tables import rows_table

        return rows_table(self.rows)

    def windows(self, run: str) -> "pa.Table":
        """The run's judged windows (``start``, ``end`` in ms, ``precision``, ``recall``, sizes, ``delay``), from
        its ``windows.parquet`` (or, in an older bundle, its ``oracle.json``)."""
        from rsp_workbench.results.tables import published_windows_table, windows_table

        row = self.row(run)
        if row.get("oracle_file"):
            return published_windows_table(self.folder / str(row["oracle_file"]))
        folder = self.run_folder(run)
        for name in (WINDOWS_FILE, ORACLE_FILE):
            if (folder / name).exists() and not inside_bundle(self.folder, folder / name):
                raise UserError("leads outside the bundle (a symbolic link); refused", file=str(folder / name))
        return windows_table(folder / WINDOWS_FILE, folder / ORACLE_FILE)

    def responses(self, run: str) -> "pa.Table":
        """The engine's answers: one row per binding (a column per variable), an empty response as one row
        of nulls."""
        from rsp_workbench.results.tables import responses_table

        self._not_published(run, "responses")
        return responses_table(self.run_folder(run) / RESPONSES_FILE)

    def stream(self, run: str) -> "pa.Table":
        """The stream the run was fed (``subject``, ``predicate``, ``object``, ``graph``, ``t`` in ms)."""
        from rsp_workbench.results.tables import stream_table

        self._not_published(run, "stream")
        entry = self._stream_entry(run)
        return stream_table(self.folder, entry, self.folder / MANIFEST)

    def kpis(self, run: str) -> "pa.Table":
        """The run's resource samples (``time_s`` since engine start, ``rss_mb``, ``cpu_percent``, ``threads``)."""
        from rsp_workbench.results.tables import kpis_table

        row = self.row(run)
        if self.published:
            name = row.get("performance_file")
            return kpis_table(self.folder / str(name) if name else None, run)
        folder = self.run_folder(run)
        files = sorted(folder.glob("P_*.csv")) if folder.is_dir() else []
        return kpis_table(files[0] if files else None, run)

    def _not_published(self, run: str, what: str) -> None:
        self.row(run)
        if self.published:
            raise UserError(f"a published YABench folder keeps no {what} (only ORACLE_ and P_ files)",
                            file=str(self.folder), field="run")

    def _stream_entry(self, run: str) -> Mapping[str, Any]:
        """The manifest's ``streams`` entry of the run (its ``stream`` in ``run-spec.json``)."""
        spec = read_json(self.run_folder(run) / RUN_SPEC_FILE)
        return self.stream_entry(spec.get("stream") if isinstance(spec, Mapping) else None)

    def stream_entry(self, key: Any) -> Mapping[str, Any]:
        """The manifest's ``streams`` entry whose ``id`` is ``key``."""
        for entry in self.manifest.get("streams") or ():
            if isinstance(entry, Mapping) and entry.get("id") == key:
                return entry
        raise UserError(f"no stream {_token(key)} in the manifest's streams", file=str(self.folder / MANIFEST),
                        field="streams")

    def to_json(self) -> dict[str, Any]:
        """The ``rspwb report --json`` object (docs/design/CLI.md)."""
        payload: dict[str, Any] = {
            "bundle": str(self.folder),
            "name": self.name,
            "status": self.status,
            "started": self.manifest.get("started"),
            "finished": self.manifest.get("finished"),
            "runs": [dict(row) for row in self.rows],
        }
        if self.manifest.get("format") and self.manifest.get("format") != BUNDLE_FORMAT:
            payload["format"] = self.manifest["format"]
            payload["test_folders"] = self.manifest.get("test_folders")
        if self.notes or self.problems:
            payload["notes"] = list(self.notes)
            payload["problems"] = [str(problem) for problem in self.problems]
        safe: dict[str, Any] = json_safe(payload)
        return safe

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for row in self.rows:
            key = str(row.get("verdict") or row.get("status"))
            counts[key] = counts.get(key, 0) + 1
        return counts


def run_row(folder: Path, spec: Mapping[str, Any], *, oracle: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One summary row from a run folder's ``run.json`` and ``oracle.json`` (missing files: not run).

    ``oracle``: ``oracle.json``'s payload when the caller has just written it (not read back)."""
    row: dict[str, Any] = {
        "run_id": spec.get("run_id"),
        "index": spec.get("index"),
        "case": spec.get("case"),
        "repetition": spec.get("repetition"),
        "variables": spec.get("variables", {}),
        "engine": spec.get("engine"),
        "engine_type": spec.get("engine_type"),
        "query": spec.get("query"),
        "stream": spec.get("stream"),
        "status": spec.get("status", "not-run"),
        "verdict": spec.get("verdict"),
        "precision": None,
        "recall": None,
        "windows": None,
        "responses": None,
        "bindings": None,
        "kpi_samples": None,
        "peak_rss_mb": None,
        "latency_ms_mean": None,
        "latency_ms_p95": None,
        "throughput_triples_per_s": None,
        "wall_s": None,
        "error": spec.get("error"),
        "first_divergence": None,
        "folder": None,
    }
    if not folder.is_dir() and row["status"] not in ("not-run", "cancelled"):
        row["status"] = row["verdict"] = "missing"  # the bundle lists it, someone deleted it
        row["error"] = f"the run folder {RUNS_DIR}/{folder.name} is missing"
        return row
    root = folder.parent.parent
    for name in (RUN_FILE, ORACLE_FILE):
        if (folder / name).exists() and not inside_bundle(root, folder / name):
            raise UserError("leads outside the bundle (a symbolic link); refused", file=str(folder / name))
    run_file = folder / RUN_FILE
    if run_file.is_file():
        run = read_json(run_file)
        row.update({
            "status": run.get("status"),
            "responses": run.get("responses"),
            "bindings": run.get("bindings"),
            "kpi_samples": run.get("samples"),
            "peak_rss_mb": run.get("peak_rss_mb"),
            "latency_ms_mean": (run.get("latency_ms") or {}).get("mean"),
            "latency_ms_p95": (run.get("latency_ms") or {}).get("p95"),
            "throughput_triples_per_s": run.get("throughput_triples_per_s"),
            "wall_s": (run.get("timings") or {}).get("wall_s"),
            "error": run.get("error") or row["error"],
            "folder": f"{RUNS_DIR}/{folder.name}",
        })
        if row["status"] != "ok":
            row["verdict"] = row["status"]
    oracle_file = folder / ORACLE_FILE
    windows = 0
    if oracle is None and oracle_file.is_file():
        found = read_oracle(oracle_file)  # the verdict fields and the number of windows, not the windows
        oracle, windows = found.fields, found.window_count or 0
    elif oracle is not None:
        oracle = json_safe(oracle)  # as the file has it
        windows = len(oracle.get("windows") or ())
    if oracle is not None:
        row.update({
            "verdict": oracle.get("verdict"),
            "precision": oracle.get("precision"),
            "recall": oracle.get("recall"),
            "windows": windows,
            "first_divergence": first_divergence_summary(oracle),
        })
        if oracle.get("error"):
            row["error"] = oracle["error"]
        if oracle.get("warning"):
            row["warning"] = oracle["warning"]
    return row


def tolerant_run_row(root: Path, spec: Mapping[str, Any], problems: list[UserError] | None = None) -> Mapping[str, Any]:
    """`run_row`, but a damaged ``run.json``/``oracle.json`` gives an ``unreadable`` row (and a problem)
    instead of an error: the other runs of the bundle still show."""
    try:
        return run_row(run_folder(root, spec.get("run_id"), file=root / MANIFEST, field="runs.run_id"), spec)
    except UserError as error:
        if problems is not None:
            problems.append(error)
        return {**{k: spec.get(k) for k in ("run_id", "index", "case", "repetition", "variables", "engine",
                                             "engine_type", "query", "stream")},
                "status": "unreadable", "verdict": "unreadable", "error": str(error)}


def first_divergence_summary(oracle: Mapping[str, Any]) -> dict[str, Any] | None:
    """Where an incorrect run first departs from the oracle, for summaries (``rspwb report --json``).

    ``t`` is the expected evaluation time in ms (the engine's time when the engine answered
    an evaluation the oracle does not expect); null for a correct run or one without a verdict.
    """
    divergence = oracle.get("first_divergence")
    if oracle.get("verdict") != "incorrect" or not isinstance(divergence, Mapping):
        return None
    expected, actual = divergence.get("expected_time"), divergence.get("actual_time")
    return {
        "t": expected if expected is not None else actual,
        "t0": divergence.get("t0"),
        "index": divergence.get("index"),
        "expected_time": expected,
        "actual_time": actual,
        "reason": divergence.get("reason"),
        "missing": sum(int(row.get("count", 1)) for row in divergence.get("missing") or ()),
        "extra": sum(int(row.get("count", 1)) for row in divergence.get("extra") or ()),
    }


def own_rows(root: Path, manifest: Mapping[str, Any], problems: list[UserError] | None = None
             ) -> tuple[Mapping[str, Any], ...]:
    """The summary rows of an own bundle: ``summary.json`` if the run finished (and its run folders are
    there), else rebuilt from the run folders; a damaged run file gives an ``unreadable`` row and an
    entry in ``problems``. Opening a bundle is `rsp_workbench.results.reader.open_bundle`."""
    specs = _objects(manifest.get("runs"), root / MANIFEST, "runs")
    _check_run_ids(root, specs, root / MANIFEST)
    summary_file = root / SUMMARY
    rows: tuple[Mapping[str, Any], ...] | None = None
    if summary_file.is_file():
        summary_rows = _objects(read_json(summary_file).get("runs"), summary_file, "runs")
        _check_run_ids(root, summary_rows, summary_file)
        rows = tuple(_with_divergence(root, row) for row in summary_rows)
        if any(row.get("folder") and not (root / str(row["folder"])).is_dir() for row in rows):
            rows = None  # stale: run folders were deleted after the summary was written
    if rows is None:  # the writer stopped before the end (or the summary is stale): rebuild from what is there
        rows = tuple(tolerant_run_row(root, spec, problems) for spec in specs)
    return rows


def check_format(manifest: Mapping[str, Any], root: Path) -> None:
    """A `UserError` naming ``manifest.json`` unless it is of the format this workbench reads."""
    written_by = manifest.get("format", BUNDLE_FORMAT)
    if written_by != BUNDLE_FORMAT:
        raise UserError(f"written as bundle format {_token(written_by)}; this workbench reads {BUNDLE_FORMAT}",
                        file=str(root / MANIFEST), field="format")


def _check_run_ids(root: Path, runs: Sequence[Mapping[str, Any]], file: Path) -> None:
    """Every run of a manifest or summary names a run folder inside the bundle (`run_folder`), and a
    summary row's ``folder`` is that one."""
    for index, run in enumerate(runs):
        folder = run_folder(root, run.get("run_id"), file=file, field=f"runs[{index}].run_id")
        named = run.get("folder")
        if named is not None and named != f"{RUNS_DIR}/{folder.name}":
            raise UserError(f"folder {_token(named)} is not the run's folder {RUNS_DIR}/{folder.name}; refused",
                            file=str(file), field=f"runs[{index}].folder")


def _objects(value: Any, file: Path, field: str) -> tuple[Mapping[str, Any], ...]:
    """A list of JSON objects (``runs`` of the manifest or the summary), else a `UserError` naming it."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise UserError("expected a list of run objects", file=str(file), field=field)
    return tuple(value)


def _with_divergence(root: Path, row: Mapping[str, Any]) -> Mapping[str, Any]:
    """A summary row written before rows carried ``first_divergence``: read it from the run's oracle.json."""
    if "first_divergence" in row:
        return row
    oracle_file = root / RUNS_DIR / str(row.get("run_id")) / ORACLE_FILE
    oracle = read_oracle(oracle_file).fields if oracle_file.is_file() else {}
    return {**row, "first_divergence": first_divergence_summary(oracle)}


def mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if key_is_ratio(value) else f"{value:.1f}"
    return str(value)


def key_is_ratio(value: float) -> bool:
    return 0.0 <= value <= 1.0


def format_table(summary: Bundle) -> str:
    """The summary table printed by ``rspwb run`` and ``rspwb report``."""
    rows = [[_cell(row.get(key)) for _, key, _ in TABLE_COLUMNS] for row in summary.rows]
    headers = [header for header, _, _ in TABLE_COLUMNS]
    widths = [max([len(h), minimum, *(len(r[i]) for r in rows)]) for i, (h, _, minimum) in enumerate(TABLE_COLUMNS)]
    numeric = {"precision", "recall", "responses", "peak_rss_mb"}
    lines = []

    def line(cells: Sequence[str]) -> str:
        parts = []
        for i, cell in enumerate(cells):
            key = TABLE_COLUMNS[i][1]
            parts.append(cell.rjust(widths[i]) if key in numeric else cell.ljust(widths[i]))
        return "  ".join(parts).rstrip()

    lines.append(line(headers))
    lines.append(line(["-" * w for w in widths]))
    lines.extend(line(r) for r in rows)
    counts = ", ".join(f"{count} {name}" for name, count in sorted(summary.counts().items()))
    lines.append(f"{summary.name}: {summary.status}; {len(summary.rows)} runs ({counts or 'none'}) in {summary.folder}")
    lines.extend(f"  {note}" for note in summary.notes)
    lines.extend(f"  {problem}" for problem in summary.problems)
    errors = [row for row in summary.rows if row.get("error") and row.get("status") not in ("ok", None)]
    for row in errors:
        first = str(row["error"]).splitlines()[0] if row["error"] else ""
        lines.append(f"  {row.get('run_id')}: {row.get('status')}: {first}")
    for row in summary.rows:
        divergence = row.get("first_divergence")
        if divergence:
            lines.append(f"  {row.get('run_id')}: first divergence at t = {divergence.get('t')} ms "
                         f"(t0 {divergence.get('t0')}): {divergence.get('reason')}")
        if row.get("warning"):
            lines.append(f"  {row.get('run_id')}: warning: {row['warning']}")
    return "\n".join(lines)
