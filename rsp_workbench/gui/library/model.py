"""The library without Qt: where the samples are, the recent files, and an experiment's summary.

Selecting an entry validates it with the CLI's loader; a corrupt file shows what is wrong
and where (``FILE:LINE: field: message``).
"""

from __future__ import annotations

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
    settings.setValue(RECENT_KEY, files[:MAX_RECENT])
    settings.sync()
    return files[:MAX_RECENT]


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
