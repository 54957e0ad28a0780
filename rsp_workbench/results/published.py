"""Published YABench results, read as a read-only result bundle.

YABench's runner writes, per engine, a *test folder* (yabench.txt Sect. 3.1)::

    config.json        generator, enginename, seed, vars {TEMP, WSIZE, WSLIDE, WPOLICY, …},
                       graceful, interval, duration, tests: [{name, stations, runs}, …]
    engine.query       the engine's query template (``${NAME}`` from vars)
    oracle.query       the oracle's static SPARQL template
    results/oracle/ORACLE_<test><n>      per window: precision,recall,actual,expected,triples,start,end,delay
    results/oracle/BOXPLOTS_<test>       engine name, then per window p1..pN;r1..rN;d1..dN
    results/performance/P_<test><n>      engine name, then time,rss_mem,cpu_percent,mem_percent,threads
    results/performance/P_<test>_agg     the same, aggregated over the repetitions

Published folders also keep these files directly under ``results/``, and a test run once
without a repetition number (YABench-One's Experiment_4: ``results/ORACLE_gracious``,
``results/ORACLE_non-gracious``, ``results/P_…``): both layouts are read, and an unnumbered
``ORACLE_<test>`` is one run of its test.

A folder holding several engines' test folders (YABench-One's ``Experiment_1/{cqels,csparql}``)
is read as one bundle. One run per ``ORACLE_<test><n>`` file (docs/design/CLI.md ``rspwb report``):
``precision``/``recall`` are the file's means over its windows, ``peak_rss_mb`` and
``kpi_samples`` come from ``P_<test><n>``. Published folders are often incomplete: what the
config declares but is not there (repetitions, ``P_`` files, ``_agg``, ``BOXPLOTS_``) is listed
in ``notes``, never filled in; unreadable files are located :class:`UserError` problems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from rsp_workbench.errors import UserError
from rsp_workbench.experiment.yabench_config import CONFIG, YabenchTest, config_tests, read_config
from rsp_workbench.results.bundle import MANIFEST, PUBLISHED_FORMAT
from rsp_workbench.results.yabench_files import (
    WindowBoxplots,
    first_line,
    parse_boxplots,
    parse_oracle,
    parse_oracle_borders,
    parse_performance,
)

RESULTS = "results"
ORACLE_DIR = "results/oracle"
PERFORMANCE_DIR = "results/performance"
QUERY_FILES = ("engine.query", "oracle.query")
#: The status of a published folder read as a bundle (``manifest["format"]``: ``PUBLISHED_FORMAT``), and of its runs.
PUBLISHED = "published"
AGGREGATE_SUFFIX = "_agg"


def is_test_folder(path: Path) -> bool:
    """A YABench test folder: ``config.json`` and a ``results/`` folder."""
    return (path / CONFIG).is_file() and (path / RESULTS).is_dir()


def test_folders(path: str | Path) -> list[Path]:
    """``path`` itself if it is a test folder, else its sub-folders that are (one engine each)."""
    root = Path(path)
    if not root.is_dir():
        return []
    if is_test_folder(root):
        return [root]
    return sorted(p for p in root.iterdir() if p.is_dir() and is_test_folder(p))


def is_published(path: str | Path) -> bool:
    """A published YABench folder (and not a workbench bundle)."""
    root = Path(path)
    return not (root / MANIFEST).is_file() and bool(test_folders(root))


def split_numbered(name: str, prefix: str, tests: Sequence[str]) -> tuple[str, int | None] | None:
    """``ORACLE_small10`` → ``("small", 10)``; the config's test names win over a plain split
    (a test named ``Q1_1`` has files ``ORACLE_Q1_11`` …). Without a repetition number
    (``ORACLE_gracious``, or exactly a declared test's name) the repetition is None."""
    if not name.startswith(prefix):
        return None
    rest = name[len(prefix):]
    if rest in tests:
        return rest, None
    for test in sorted(tests, key=len, reverse=True):
        if rest.startswith(test) and rest[len(test):].isdigit():
            return test, int(rest[len(test):])
    match = re.fullmatch(r"(.*?)(\d+)", rest)
    if match and match.group(1):
        return match.group(1), int(match.group(2))
    return (rest, None) if rest and not rest.isdigit() else None


def result_files(folder: Path, prefix: str) -> list[Path]:
    """The files ``prefix*`` of a test folder, in ``results/oracle`` (``ORACLE_``, ``BOXPLOTS_``)
    or ``results/performance`` (``P_``), or directly in ``results/``."""
    place = PERFORMANCE_DIR if prefix.startswith("P_") else ORACLE_DIR
    return sorted(p for where in (place, RESULTS) for p in (folder / where).glob(f"{prefix}*") if p.is_file())


def _repetition_order(repetition: int | None) -> int:
    return -1 if repetition is None else repetition


def _ranges(numbers: Sequence[int]) -> str:
    """``[5, 6, 7, 9]`` → ``5–7, 9``."""
    parts: list[str] = []
    ordered = sorted(numbers)
    start = previous = ordered[0]
    following: list[int | None] = [*ordered[1:], None]
    for number in following:
        if number is not None and number == previous + 1:
            previous = number
            continue
        parts.append(str(start) if start == previous else f"{start}–{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(parts)


@dataclass(frozen=True)
class TestFolder:
    """One engine's test folder as read: its label (folder name), engine name and config."""

    folder: Path
    label: str
    engine: str
    config: Mapping[str, Any]
    tests: tuple[YabenchTest, ...]


@dataclass(frozen=True)
class PublishedResults:
    """A published folder as far as it could be read."""

    folder: Path
    name: str
    test_folders: tuple[TestFolder, ...]
    rows: tuple[dict[str, Any], ...]
    notes: tuple[str, ...]
    problems: tuple[UserError, ...]

    @property
    def manifest(self) -> dict[str, Any]:
        """What stands in for ``manifest.json``: the format and each test folder's config."""
        return {
            "format": PUBLISHED_FORMAT,
            "name": self.name,
            "status": PUBLISHED,
            "test_folders": [{"folder": t.label, "engine": t.engine, "config": dict(t.config)}
                             for t in self.test_folders],
        }


def _engine_name(folder: Path, config: Mapping[str, Any]) -> str:
    """``enginename`` of the config, else the first line of a ``BOXPLOTS_``/``P_`` file, else the folder name."""
    if str(config.get("enginename") or "").strip():
        return str(config["enginename"]).strip()
    for prefix in ("BOXPLOTS_", "P_"):
        for path in result_files(folder, prefix):
            line = first_line(path)
            if line and "," not in line and ";" not in line:
                return line
    return folder.name


def read_published(path: str | Path) -> PublishedResults:
    """Read a test folder or a folder of test folders; never raises for bad content."""
    root = Path(path)
    folders = test_folders(root)
    if not folders:
        raise UserError(f"not a YABench test folder (no {CONFIG} with a {RESULTS}/ folder)", file=str(root))
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    problems: list[UserError] = []
    read: list[TestFolder] = []
    for folder in folders:
        label = folder.name if folder != root or len(folders) > 1 else root.name
        where = "" if len(folders) == 1 else f"{label}: "
        try:
            config: Mapping[str, Any] = read_config(folder, notes)
            tests = config_tests(config, str(folder / CONFIG))
        except UserError as error:
            problems.append(error)
            config, tests = {}, []
        engine = _engine_name(folder, config)
        read.append(TestFolder(folder, label, engine, config, tuple(tests)))
        notes += [f"{where}{name} missing" for name in QUERY_FILES if not (folder / name).is_file()]
        rows += _folder_rows(root, folder, label, engine, config, tests, where, notes, problems)
    for index, row in enumerate(rows):
        row["index"] = index
    return PublishedResults(root, root.name, tuple(read), tuple(rows), tuple(notes), tuple(problems))


def _folder_rows(root: Path, folder: Path, label: str, engine: str, config: Mapping[str, Any],
                 tests: Sequence[YabenchTest], where: str, notes: list[str],
                 problems: list[UserError]) -> list[dict[str, Any]]:
    names = [t.name for t in tests]
    oracle_files: dict[str, dict[int | None, Path]] = {}
    for path in result_files(folder, "ORACLE_"):
        split = split_numbered(path.name, "ORACLE_", names)
        if split is None:
            notes.append(f"{where}{path.name}: not ORACLE_<test><repetition>, left out")
            continue
        oracle_files.setdefault(split[0], {})[split[1]] = path
    performance_files: dict[str, dict[int | None, Path]] = {}
    for path in result_files(folder, "P_"):
        split = None if path.name.endswith(AGGREGATE_SUFFIX) else split_numbered(path.name, "P_", names)
        if split is not None:
            performance_files.setdefault(split[0], {})[split[1]] = path
    declared = {t.name: t for t in tests}
    variables = {str(k): v for k, v in (config.get("vars") or {}).items()} if isinstance(config.get("vars"), Mapping) else {}
    rows: list[dict[str, Any]] = []
    disagreements: dict[str, list[str]] = {}  # what differs → the tests it differs for
    for test_name in list(dict.fromkeys(names + sorted(set(oracle_files) - set(names)))):
        test = declared.get(test_name)
        found = oracle_files.get(test_name, {})
        if test is None:
            notes.append(f"{where}{test_name}: ORACLE_ files of a test {CONFIG} does not declare")
        _note_missing(where, test_name, test, found, folder, performance_files.get(test_name, {}), notes)
        disagreement = _configuration_disagreement(config, test, found.values())
        if disagreement:
            disagreements.setdefault(disagreement, []).append(test_name)
        for repetition in sorted(found, key=_repetition_order):
            rows.append(_row(root, label, engine, test_name, repetition, found[repetition],
                             performance_files.get(test_name, {}).get(repetition),
                             {**variables, **(dict(test.settings) if test else {})}, problems))
    notes += [f"{where}{', '.join(tests)}: {text}" for text, tests in disagreements.items()]  # one line each
    return rows


def _note_missing(where: str, test: str, declared: YabenchTest | None, found: Mapping[int | None, Path],
                  folder: Path, performance: Mapping[int | None, Path], notes: list[str]) -> None:
    """What the config declares and is not there; a test run once without repetition number
    (``ORACLE_<test>``) has no repetitions to miss, to aggregate or to draw as boxplots."""
    numbered = [n for n in found if n is not None]
    expected = declared.runs if declared is not None and declared.runs is not None else max(numbered, default=0)
    missing = [n for n in range(1, expected + 1) if n not in found]
    if not found:
        notes.append(f"{where}{test}: no ORACLE_{test}<n> files (no results for this test)")
    elif missing and numbered:
        notes.append(f"{where}{test}: {len(numbered)} of {expected} repetitions; ORACLE_{test}<n> missing for "
                     f"n = {_ranges(missing)}")
    no_samples = [n for n in numbered if n not in performance]
    if no_samples:
        notes.append(f"{where}{test}: no P_{test}<n> (resources) for n = {_ranges(no_samples)}")
    if None in found and None not in performance:
        notes.append(f"{where}{test}: no P_{test} (resources)")
    if numbered and not any(p.name == f"P_{test}{AGGREGATE_SUFFIX}" for p in result_files(folder, "P_")):
        notes.append(f"{where}{test}: P_{test}{AGGREGATE_SUFFIX} missing (no resources aggregated over repetitions)")
    if numbered and not any(p.name == f"BOXPLOTS_{test}" for p in result_files(folder, "BOXPLOTS_")):
        notes.append(f"{where}{test}: BOXPLOTS_{test} missing (no boxplots across repetitions)")


def _configuration_disagreement(config: Mapping[str, Any], test: YabenchTest | None,
                                oracle_files: Iterable[Path]) -> str | None:
    """One line when the ORACLE files' window sizes (``triples``) are not what the folder's own
    configuration generates — SG1 writes 7 triples per observation, one observation per station
    and interval — e.g. results copied from a run with another station count; None when they
    agree or the configuration does not say (another generator, no window size)."""
    import statistics

    from rsp_workbench.core.time import format_duration, parse_duration
    from rsp_workbench.generators.sg1 import TRIPLES_PER_OBSERVATION

    settings = {**config, **(dict(test.settings) if test is not None else {})}
    given = config.get("vars")
    variables: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    if str(config.get("generator") or "SG1").strip().lower() != "sg1":
        return None
    try:
        stations = int(str(settings.get("stations", "")).strip())
        size = parse_duration(str(settings.get("WSIZE", variables.get("WSIZE", ""))).strip(), field="WSIZE")
        interval = parse_duration(str(settings.get("interval", "1s")).strip(), field="interval")
    except (UserError, ValueError):
        return None
    if stations <= 0 or size <= 0 or interval <= 0:
        return None
    sizes: list[int] = []
    for path in oracle_files:
        try:
            sizes += [int(n) for n in parse_oracle(path.read_text(encoding="utf-8"), file=str(path)).columns["window_triples"]]
        except (UserError, OSError, UnicodeDecodeError, ValueError):
            continue
    sizes = [n for n in sizes if n > 0]
    if not sizes:
        return None
    per_station = size // interval * TRIPLES_PER_OBSERVATION  # one full window of one station
    held = int(statistics.median(sizes))
    configured = stations * per_station
    if per_station == 0 or round(held / per_station) == stations:
        return None
    return (f"the ORACLE files hold {held} triples a window where the configured {stations} "
            f"station{'s' if stations != 1 else ''} give{'s' if stations == 1 else ''} {configured} "
            f"({format_duration(size)} windows, {format_duration(interval)} interval, "
            f"{TRIPLES_PER_OBSERVATION} triples an observation): the results are not of this configuration")


def _row(root: Path, label: str, engine: str, test: str, repetition: int | None, oracle: Path, performance: Path | None,
         variables: Mapping[str, Any], problems: list[UserError]) -> dict[str, Any]:
    """The ``rspwb report`` row of one published repetition (the keys of ``bundle.run_row``)."""
    row: dict[str, Any] = {
        "run_id": f"{label}-{test}" + (f"-rep{repetition}" if repetition is not None else ""), "index": None, "case": None, "repetition": repetition,
        "variables": dict(variables), "engine": engine, "engine_type": PUBLISHED, "query": test, "stream": None,
        "status": PUBLISHED, "verdict": None, "precision": None, "recall": None, "windows": None,
        "responses": None, "bindings": None, "kpi_samples": None, "peak_rss_mb": None, "latency_ms_mean": None,
        "latency_ms_p95": None, "throughput_triples_per_s": None, "wall_s": None, "error": None,
        "first_divergence": None, "folder": label,
        "oracle_file": oracle.relative_to(root).as_posix(),
        "performance_file": performance.relative_to(root).as_posix() if performance is not None else None,
    }
    try:
        lines = parse_oracle(oracle.read_text(encoding="utf-8"), file=str(oracle))
        row.update(precision=lines.mean("precision"), recall=lines.mean("recall"), windows=len(lines))
    except (UserError, OSError, UnicodeDecodeError) as error:
        problem = error if isinstance(error, UserError) else UserError(f"cannot read: {error}", file=str(oracle))
        problems.append(problem)
        row.update(status="unreadable", verdict="unreadable", error=str(problem))
    if performance is not None:
        try:
            samples = parse_performance(performance.read_text(encoding="utf-8"), file=str(performance))
            row.update(kpi_samples=len(samples.time_s), peak_rss_mb=samples.peak_rss_mb)
        except (UserError, OSError, UnicodeDecodeError) as error:
            problems.append(error if isinstance(error, UserError) else UserError(f"cannot read: {error}",
                                                                                 file=str(performance)))
    return row


def published_boxplots(results: PublishedResults, problems: list[UserError]) -> list[WindowBoxplots]:
    """Every ``BOXPLOTS_<test>`` with its test as the run group's query and the window borders of
    the test's lowest-numbered ``ORACLE_`` file (the lines of one test share their windows)."""
    found = []
    for test_folder in results.test_folders:
        names = [t.name for t in test_folder.tests]
        for path in result_files(test_folder.folder, "BOXPLOTS_"):
            test = path.name.removeprefix("BOXPLOTS_")
            try:
                boxplots = parse_boxplots(path.read_text(encoding="utf-8"), group=test_folder.label, file=str(path))
            except UserError as error:
                problems.append(error)
                continue
            oracles = sorted(((_repetition_order(split[1]), p) for p in result_files(test_folder.folder, f"ORACLE_{test}")
                              if (split := split_numbered(p.name, "ORACLE_", names or [test])) and split[0] == test))
            start: tuple[int, ...] = ()
            end: tuple[int, ...] = ()
            if oracles:
                try:
                    start, end = parse_oracle_borders(oracles[0][1].read_text(encoding="utf-8"), file=str(oracles[0][1]))
                except UserError as error:
                    problems.append(error)
            found.append(WindowBoxplots(boxplots.group, test_folder.engine, boxplots.precision, boxplots.recall,
                                        boxplots.delay, start, end, case=None, query=test))
    return found
