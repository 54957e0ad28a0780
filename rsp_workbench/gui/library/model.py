"""The library without Qt: where the samples are, the recent files, an experiment's summary, and
the user's settings (Spark master, results folder, recent-list size) that the Settings dialog edits.

Selecting an entry validates it with the CLI's loader; a corrupt file shows what is wrong
and where (``FILE:LINE: field: message``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rsp_workbench.errors import UserError

if TYPE_CHECKING:
    from rsp_workbench.experiment.model import StreamSpec


class Settings(Protocol):
    """What the library needs of the application's settings (a ``QSettings`` in the GUI)."""

    def value(self, key: str, default: Any = ...) -> Any: ...

    def setValue(self, key: str, value: Any) -> None: ...  # noqa: N802 - Qt's name

    def sync(self) -> None: ...


RECENT_KEY = "library/recent_files"
MAX_RECENT = 12
RECENT_SIZE_KEY = "library/recent_size"  # how many recent files and bundles are kept
RESULTS_DIR_KEY = "runs/results_dir"  # where new runs' bundles go (RSPWB_RESULTS_DIR wins)
RECENT_SIZE_RANGE = (1, 50)
#: Spark's master URL forms: local, local[N], local[*], local[N,F], spark://, k8s://, mesos://, yarn
MASTER_PATTERN = re.compile(r"local(\[(\*|[1-9]\d*)(,\s*[1-9]\d*)?\])?|yarn|(spark|k8s|mesos)://\S+")


def default_samples_dir() -> Path:
    """``sample_experiments/`` next to the package (a source checkout)."""
    return Path(__file__).resolve().parents[3] / "sample_experiments"


def is_sample(path: Path, samples_dir: Path) -> bool:
    """A file of the library's sample folder or of the shipped samples: opened as a template,
    because saving over it would change a paper's reproduction."""
    resolved = path.expanduser().resolve()
    return any(resolved.is_relative_to(folder.expanduser().resolve()) for folder in (samples_dir, default_samples_dir()))


def recent_files(settings: Settings) -> list[str]:
    """The recent experiment files, newest first."""
    value = settings.value(RECENT_KEY, [])
    if isinstance(value, str):
        value = [value]
    return [str(v) for v in (value or [])]


def add_recent_file(settings: Settings, path: str | Path) -> list[str]:
    """Put ``path`` first among the recent files (once, at most MAX_RECENT kept)."""
    text = str(Path(path).resolve())
    files = [text] + [f for f in recent_files(settings) if f != text]
    kept = files[:recent_size(settings)]
    settings.setValue(RECENT_KEY, kept)
    settings.sync()
    return kept


def recent_size(settings: Settings | None) -> int:
    """How many recent files (and bundles) are kept: the setting, else MAX_RECENT."""
    value = settings.value(RECENT_SIZE_KEY, MAX_RECENT) if settings is not None else MAX_RECENT
    try:
        size = int(value)
    except (TypeError, ValueError):
        return MAX_RECENT
    low, high = RECENT_SIZE_RANGE
    return size if low <= size <= high else MAX_RECENT


def results_dir_setting(settings: Settings) -> Path | None:
    """The results folder the user chose in Settings (None: the default)."""
    value = settings.value(RESULTS_DIR_KEY, "")
    return Path(str(value)).expanduser() if value else None


@dataclass(frozen=True)
class UserSettings:
    """What the Settings dialog edits; ``spark_master`` and ``results_dir`` empty mean the default."""

    spark_master: str
    results_dir: str
    recent_size: int


def read_settings(settings: Settings, settings_file: Path) -> UserSettings:
    """The current settings: the recent-list size and results folder from the application's
    settings, the Spark master from the user settings file the pipeline reads (``spark.master``)."""
    folder = results_dir_setting(settings)
    return UserSettings(_file_master(settings_file), str(folder) if folder else "", recent_size(settings))


def check_settings(spark_master: str, results_dir: str, recent: str) -> tuple[UserSettings | None, str]:
    """(the settings, "") or (None, one message naming the wrong field)."""
    master = spark_master.strip()
    if master and not MASTER_PATTERN.fullmatch(master):
        return None, f"Spark master: {master!r} is not a master URL (local[*], local[4], spark://HOST:PORT, yarn, k8s://…)"
    folder = results_dir.strip()
    if folder:
        path = Path(folder).expanduser()
        if not path.is_absolute():
            return None, f"Results folder: {folder!r} is not an absolute path"
        if path.exists() and not path.is_dir():
            return None, f"Results folder: {folder} exists and is not a folder"
    low, high = RECENT_SIZE_RANGE
    if not recent.strip().isdigit() or not low <= int(recent) <= high:
        return None, f"Recent-list size: {recent.strip()!r} is not a whole number from {low} to {high}"
    return UserSettings(master, folder, int(recent)), ""


def write_settings(settings: Settings, settings_file: Path, values: UserSettings) -> None:
    """Store ``values``: the folder and size in the application's settings, the master in the
    user settings file (its other keys kept; an empty master removes the key)."""
    import yaml

    settings.setValue(RESULTS_DIR_KEY, values.results_dir)
    settings.setValue(RECENT_SIZE_KEY, values.recent_size)
    settings.sync()
    if _file_master(settings_file) == values.spark_master:
        return  # unchanged: the file is not rewritten
    data = _file_data(settings_file)
    data.pop("spark.master", None)
    if isinstance(data.get("spark"), dict):
        data["spark"].pop("master", None)
        if not data["spark"]:
            data.pop("spark")
    if values.spark_master:
        data["spark.master"] = values.spark_master
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def master_override(environ: "os._Environ[str] | dict[str, str]" = os.environ) -> str:
    """The Spark master the environment imposes over the settings file ("" if none)."""
    from rsp_workbench.experiment.spark_master import MASTER_ENV

    return environ.get(MASTER_ENV, "").strip()


def _file_data(path: Path) -> dict[str, Any]:
    import yaml

    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise UserError(f"cannot read settings: {error}", file=str(path)) from None
    return data if isinstance(data, dict) else {}


def _file_master(path: Path) -> str:
    data = _file_data(path)
    value = data.get("spark.master")
    if value is None and isinstance(data.get("spark"), dict):
        value = data["spark"].get("master")
    return value.strip() if isinstance(value, str) else ""


def describe_experiment(path: Path) -> tuple[bool, str]:
    """(valid, HTML summary or the located error) for the details pane."""
    from rsp_workbench.experiment import expand_runs, load_experiment
    from rsp_workbench.experiment.runs import variable_combinations

    try:
        experiment = load_experiment(path)
    except UserError as error:
        return False, f"<span style='color:#c62828'><b>Cannot use this file</b><br>{escape_html(str(error))}</span>"
    except Exception as error:  # noqa: BLE001 - a library must never crash on a bad file
        return False, f"<span style='color:#c62828'><b>Cannot read this file</b><br>{escape_html(path.name)}: {escape_html(str(error))}</span>"
    engines = ", ".join(f"{e.id} ({e.preset or e.type})" for e in experiment.engines)
    queries = ", ".join(q.id for q in experiment.queries)
    if experiment.named_streams:
        items = "".join(f"<li>&lt;{escape_html(str(s.iri))}&gt;: {escape_html(_stream_source(s, experiment.base_dir))}</li>"
                        for s in experiment.streams)
        streams = f"<b>Streams</b> ({len(experiment.streams)}, each window reads the one it names):<ul style='margin:0'>{items}</ul>"
    else:
        streams = f"<b>Stream</b>: {escape_html(_stream_source(experiment.stream, experiment.base_dir))}<br>"
    lines = [
        f"<h3>{escape_html(experiment.name)}</h3>",
        f"<p>{escape_html(experiment.description)}</p>" if experiment.description else "",
        streams,
        f"<b>Queries</b>: {escape_html(queries)}<br>",
        f"<b>Engines</b>: {escape_html(engines)}<br>",
        f"<b>Runs</b>: {len(expand_runs(experiment))} (repetitions {experiment.repetitions}, "
        f"{len(variable_combinations(experiment))} variable combination(s))<br>",
        f"<b>Sizes</b>: {escape_html(', '.join(experiment.sizes) or 'none')}<br>",
        f"<span style='color:#666'>{escape_html(str(path))}</span>",
    ]
    return True, "".join(lines)


def _stream_source(stream: "StreamSpec", base_dir: Path) -> str:
    """``generator sg1`` or ``file s.nq (nquads)`` (the path as relative to the experiment as it can be)."""
    if stream.generator is not None or stream.file is None:  # exactly one of them is set
        return f"generator {stream.generator}"
    file = Path(stream.file)
    try:
        file = file.resolve().relative_to(Path(base_dir).resolve())
    except ValueError:
        pass
    return f"file {file} ({stream.format})"


def escape_html(text: str) -> str:
    """Text shown in a rich-text label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
