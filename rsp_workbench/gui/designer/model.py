"""The experiment designer's state, without Qt: the raw YAML mapping plus an undo stack.

The designer edits the experiment as the plain mapping the file holds (so key order,
templates such as ``${STATIONS}`` and optional fields survive a round trip) and validates
it with the same loader the CLI uses (`rsp_workbench.experiment.loads_experiment`). Every edit
is a command on a stack (set a field, remove a field, replace the document), so undo/redo
work the same whether the change came from a form widget or from the YAML pane.
Observers are plain callbacks (napari-style evented model kept minimal): the Qt views
subscribe and never hold state of their own.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from rsp_workbench.errors import UserError
from rsp_workbench.gui.designer.window_clauses import query_windows, window_stream_iri
from rsp_workbench.gui.designer.stream_edits import (
    checked_new_iri,
    stream_iris,
    with_one_stream,
    with_renamed_stream,
    with_several_streams,
    without_stream,
)

PathKey = str | int
FieldPath = tuple[PathKey, ...]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"

    def __copy__(self) -> "_Missing":
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> "_Missing":
        return self


MISSING: Any = _Missing()

# what a new stream starts as (a new experiment, a stream added to `streams:`, the Generator switch)
NEW_GENERATED_STREAM: dict[str, Any] = {
    "generator": "sg1",
    "params": {"stations": 10, "interval": "1s", "duration": "60s"},
}
NEW_RECORDED_STREAM: dict[str, Any] = {"file": "data/stream.stream", "format": "yabench"}
EXPERIMENT_SUFFIXES = (".yaml", ".yml")  # other files must hold a YAML mapping to open as an experiment
FALLBACK_STREAM_IRI = "http://example.org/stream"

NEW_EXPERIMENT: dict[str, Any] = {
    "name": "new-experiment",
    "seed": 0,
    "repetitions": 1,
    "variables": {"WSIZE": "10s", "WSLIDE": "10s"},
    "stream": copy.deepcopy(NEW_GENERATED_STREAM),
    "queries": [
        {
            "id": "q1",
            "syntax": "csparql",
            "text": (
                "REGISTER QUERY q1 AS\n"
                "SELECT ?obs ?v\n"
                "FROM STREAM <http://ex.org/s> [RANGE ${WSIZE} STEP ${WSLIDE}]\n"
                "WHERE { ?obs <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#floatValue> ?v }\n"
            ),
        }
    ],
    "engines": [{"id": "csparql-like", "type": "secret", "preset": "csparql"}],
}


def path_text(path: Sequence[PathKey]) -> str:
    """``("engines", 0, "semantics")`` → ``engines[0].semantics`` (the loader's field paths)."""
    text = ""
    for key in path:
        if isinstance(key, int) and not isinstance(key, bool):
            text += f"[{key}]"
        else:
            text = f"{text}.{key}" if text else str(key)
    return text


_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(text: str) -> FieldPath:
    """Inverse of :func:`path_text`: ``engines[0].semantics`` → ``("engines", 0, "semantics")``."""
    keys: list[PathKey] = []
    for name, index in _SEGMENT.findall(text or ""):
        keys.append(int(index) if index else name)
    return tuple(keys)


def dump_yaml(raw: Any) -> str:
    """YAML text of a raw experiment mapping, as the loader writes it (empty for an empty mapping)."""
    from rsp_workbench.experiment.loader import raw_to_yaml

    return raw_to_yaml(raw) if raw else ""


def parse_scalar(text: str) -> Any:
    """A form's text as the YAML scalar it would be in a file (``10`` → 10, ``5s`` → '5s')."""
    stripped = text.strip()
    if stripped == "":
        return MISSING
    if "${" in stripped:
        return stripped
    try:
        value = yaml.safe_load(stripped)
    except yaml.YAMLError:
        return stripped
    return value if isinstance(value, (str, int, float, bool)) else stripped


def scalar_text(value: Any) -> str:
    """Inverse of :func:`parse_scalar` for display in a line edit."""
    if value is MISSING or value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def command_text(value: Any) -> str:
    """An external engine's command list as one line, quoted like a shell would need it."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return shlex.join(value)
    return scalar_text(value) if not isinstance(value, (list, dict)) else yaml.safe_dump(
        value, default_flow_style=True).strip()


def parse_command(text: str) -> Any:
    """Inverse of :func:`command_text`: split like a shell (the loader then runs it without one).

    A YAML list (``[a, b]``) is taken as is; text that does not split (an open quote) is kept
    as a string so that the loader reports it at the field.
    """
    stripped = text.strip()
    if not stripped:
        return MISSING
    if stripped.startswith("["):
        try:
            value = yaml.safe_load(stripped)
        except yaml.YAMLError:
            return stripped
        return value
    try:
        return shlex.split(stripped)
    except ValueError:
        return stripped


def engine_with_type(engine: Any, engine_type: str) -> dict[str, Any]:
    """The engine mapping switched to ``engine_type``, dropping what that type rejects.

    Parameters the new type does not take and faults (for ``external``) would only turn
    into loader errors; an eviction engine starts with the two parameters it requires.
    """
    from rsp_workbench.experiment.runs import ENGINE_PARAMETERS

    new = dict(engine) if isinstance(engine, dict) else {}
    new["type"] = engine_type
    allowed = ENGINE_PARAMETERS.get(engine_type, {})
    parameters = new.get("parameters")
    kept = {k: v for k, v in parameters.items() if k in allowed} if isinstance(parameters, dict) else {}
    if engine_type == "eviction":
        kept.setdefault("strategy", "fifo")
        kept.setdefault("cache_size", 100)
    if kept:
        new["parameters"] = kept
    else:
        new.pop("parameters", None)
    if engine_type == "external":
        new.pop("faults", None)
    return new


def stream_summary(stream: Any) -> str:
    """``generator sg1`` / ``file s.nq`` for a stream mapping as written (lists and tooltips)."""
    if not isinstance(stream, dict):
        return "not a stream description"
    if stream.get("generator") is not None:
        return f"generator {stream['generator']}"
    if stream.get("file") is not None:
        return f"file {stream['file']}"
    return "needs a file or a generator"


# --------------------------------------------------------------------------- commands


@dataclass
class Command:
    """One undoable edit: a new document (``after``) replacing ``before`` at ``path``; the texts
    are kept too, so that undo gives back the text exactly as it was (comments and all)."""

    description: str
    path: FieldPath
    before: Any
    after: Any
    mergeable: bool = False
    before_text: str = ""
    after_text: str = ""


@dataclass(frozen=True)
class Change:
    """What observers receive: which field changed (``()`` = everything) and who did it."""

    path: FieldPath
    origin: str  # "form", "yaml", "undo", "redo", "load"


@dataclass(frozen=True)
class Validation:
    """The outcome of validating the document: the Experiment, or the located error."""

    experiment: Any = None
    error: UserError | None = None
    yaml_error: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def field_path(self) -> FieldPath:
        return parse_path(self.error.field or "") if self.error else ()


@dataclass
class DesignerModel:
    """The document being designed, its file, its undo stack and its validation state."""

    raw: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(NEW_EXPERIMENT))
    file: Path | None = None
    base_dir: Path | None = None
    _undo: list[Command] = field(default_factory=list)
    _redo: list[Command] = field(default_factory=list)
    _listeners: list[Callable[[Change], None]] = field(default_factory=list)
    _saved_raw: Any = None
    yaml_error: UserError | None = None  # the YAML pane's text does not parse (doc unchanged)
    # the document's text as the user sees it: the file or the YAML pane, with form edits
    # carried into it in place (yaml_edits); validation runs on it so that error lines match
    source_text: str | None = None
    validation: Validation = field(default_factory=Validation)
    moved_paths: list[Any] = field(default_factory=list)  # what the last save rewrote (save_as_paths.MovedPath)
    template: bool = False  # a shipped sample: Save asks for a new place

    def __post_init__(self) -> None:
        if self.source_text is None:
            self.source_text = dump_yaml(self.raw)
        self._saved_raw = copy.deepcopy(self.raw)
        self.validation = self.validate()

    # ------------------------------------------------------------------ observers
    def subscribe(self, callback: Callable[[Change], None]) -> None:
        self._listeners.append(callback)

    def unsubscribe(self, callback: Callable[[Change], None]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def _emit(self, change: Change) -> None:
        self.validation = self.validate()
        for callback in list(self._listeners):
            callback(change)

    # ------------------------------------------------------------------ reading
    def get(self, path: Sequence[PathKey], default: Any = MISSING) -> Any:
        node: Any = self.raw
        for key in path:
            if isinstance(key, int) and isinstance(node, list) and 0 <= key < len(node):
                node = node[key]
            elif isinstance(key, str) and isinstance(node, dict) and key in node:
                node = node[key]
            else:
                return default
        return node

    @property
    def dirty(self) -> bool:
        return self.raw != self._saved_raw

    @property
    def can_undo(self) -> bool:
        return bool(self._undo) or self.yaml_error is not None

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo_text(self) -> str:
        return "YAML that does not parse" if self.yaml_error else self._undo[-1].description if self._undo else ""

    def redo_text(self) -> str:
        return self._redo[-1].description if self._redo else ""

    def yaml_text(self) -> str:
        """The document's text: as loaded or typed, with form edits made in place."""
        return self.source_text if self.source_text is not None else dump_yaml(self.raw)

    def shown_text(self) -> str:
        """The YAML the pane shows (the document's text)."""
        return self.yaml_text()

    def _edited_text(self, raw: dict[str, Any]) -> str:
        """The text changed to read as ``raw``, every line not edited kept byte for byte."""
        from rsp_workbench.gui.designer.yaml_edits import edit_text

        return edit_text(self.yaml_text(), raw, dump_yaml)

    # ------------------------------------------------------------------ editing
    def set(self, path: Sequence[PathKey], value: Any, *, merge: bool = False, origin: str = "form") -> bool:
        """Set (or with ``MISSING`` remove) the field at ``path``; creates parent mappings.

        ``merge`` folds consecutive edits of the same field into one undo step (typing).
        Returns False if nothing changed.
        """
        path = tuple(path)
        if not path:
            raise ValueError("use replace() for the whole document")
        before = copy.deepcopy(self.raw)
        after = copy.deepcopy(self.raw)
        _assign(after, path, copy.deepcopy(value))
        if after == before:
            return False
        verb = "Remove" if value is MISSING else "Set"
        text = self._edited_text(after)
        self._push(Command(f"{verb} {path_text(path)}", path, before, after, merge, self.yaml_text(), text))
        self.raw = after
        self.source_text = text
        self._emit(Change(path, origin))
        return True

    def remove(self, path: Sequence[PathKey]) -> bool:
        return self.set(path, MISSING)

    def append(self, path: Sequence[PathKey], value: Any) -> int:
        """Append ``value`` to the list at ``path`` (created if absent); returns its index."""
        items = list(self.get(path, []) or [])
        items.append(value)
        self.set(path, items)
        return len(items) - 1

    def remove_item(self, path: Sequence[PathKey], index: int) -> None:
        items = list(self.get(path, []) or [])
        if 0 <= index < len(items):
            del items[index]
            self.set(path, items if items else MISSING)

    def replace(self, raw: Any, *, description: str = "Edit YAML", origin: str = "yaml", text: str | None = None) -> bool:
        """Replace the whole document: typed in the YAML pane (``text``), or a structural form edit
        (several streams ↔ one) carried into the text in place."""
        if not isinstance(raw, dict):
            raw = {} if raw is None else raw
        if raw == self.raw:
            return False
        after_text = text if text is not None else self._edited_text(raw)
        self._push(Command(description, (), copy.deepcopy(self.raw), copy.deepcopy(raw), origin == "yaml",
                           self.yaml_text(), after_text))
        self.raw = copy.deepcopy(raw)
        self.source_text = after_text
        self._emit(Change((), origin))
        return True

    def set_yaml_text(self, text: str) -> bool:
        """Apply YAML typed in the pane. Unparseable YAML sets ``yaml_error`` and changes nothing."""
        from rsp_workbench.experiment.source import load_yaml

        try:
            raw, _ = load_yaml(text, self._file_label())
        except UserError as error:
            self.yaml_error = error
            self.validation = Validation(error=error, yaml_error=True)
            for callback in list(self._listeners):
                callback(Change((), "yaml-error"))
            return False
        self.yaml_error = None
        if not isinstance(raw, dict):
            not_mapping = UserError("the experiment must be a mapping of fields", file=self._file_label(), line=1)
            self.yaml_error = not_mapping
            self.validation = Validation(error=not_mapping, yaml_error=True)
            for callback in list(self._listeners):
                callback(Change((), "yaml-error"))
            return False
        changed = self.replace(raw, origin="yaml", text=text)
        self.source_text = text
        self.validation = self.validate()
        if changed:
            for callback in list(self._listeners):
                callback(Change((), "yaml-validated"))
        else:
            for callback in list(self._listeners):
                callback(Change((), "yaml"))
        return True

    def _push(self, command: Command) -> None:
        top = self._undo[-1] if self._undo else None
        if command.mergeable and top is not None and top.mergeable and top.path == command.path:
            top.after = command.after
            top.after_text = command.after_text
        else:
            self._undo.append(command)
        self._redo.clear()

    def undo(self) -> bool:
        """Undo the last edit. YAML typed in the pane that does not parse is an edit of its own: the
        first undo gives back the last text that parsed, and the edits before it stay."""
        if self.yaml_error is not None:
            self.yaml_error = None
            self._emit(Change((), "undo"))
            return True
        if not self._undo:
            return False
        command = self._undo.pop()
        self._redo.append(command)
        self.raw = copy.deepcopy(command.before)
        self.yaml_error = None
        self.source_text = command.before_text
        self._emit(Change(command.path, "undo"))
        return True

    def redo(self) -> bool:
        if not self._redo:
            return False
        command = self._redo.pop()
        self._undo.append(command)
        self.raw = copy.deepcopy(command.after)
        self.yaml_error = None
        self.source_text = command.after_text
        self._emit(Change(command.path, "redo"))
        return True

    # ------------------------------------------------------------------ streams
    @property
    def several_streams(self) -> bool:
        """True when the document uses ``streams:`` (stream IRI → stream) rather than ``stream:``."""
        return isinstance(self.raw.get("streams"), dict) and "stream" not in self.raw

    def stream_iris(self) -> list[str]:
        """The IRIs ``streams:`` declares, in file order (empty for a single ``stream:``)."""
        return stream_iris(self.raw)

    def query_template(self, index: int) -> tuple[str, bool]:
        """Query ``index``'s template and whether it is editable inline (``text``, not a ``file``)."""
        query = self.get(("queries", index), {})
        if not isinstance(query, dict):
            return "", False
        if isinstance(query.get("text"), str):
            return query["text"], True
        if isinstance(query.get("file"), str):
            return self._query_file_text(query["file"]) or "", False
        return "", False

    def unreadable_query_file(self, index: int) -> str | None:
        """The ``file`` of query ``index`` when it cannot be read from the experiment's folder."""
        query = self.get(("queries", index), {})
        if not isinstance(query, dict) or isinstance(query.get("text"), str) or not isinstance(query.get("file"), str):
            return None
        return query["file"] if self._query_file_text(query["file"]) is None else None

    def _query_file_text(self, file: str) -> str | None:
        try:
            return (Path(self.base_dir or Path.cwd()) / file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def window_iris(self) -> list[tuple[str, int, str]]:
        """``(query id, window index, stream IRI)`` of every query window whose IRI resolves, in file order."""
        found = []
        queries = self.get(("queries",), [])
        for index, query in enumerate(queries if isinstance(queries, list) else []):
            template, _ = self.query_template(index)
            syntax = query.get("syntax") if isinstance(query, dict) else None
            query_id = str(query.get("id", f"#{index}")) if isinstance(query, dict) else f"#{index}"
            for number, window in enumerate(query_windows(template, syntax if isinstance(syntax, str) else None)):
                iri = window_stream_iri(template, window)
                if iri is not None:
                    found.append((query_id, number, iri))
        return found

    def suggested_stream_iri(self) -> str:
        """An IRI for a new stream: the first window IRI not declared yet, else a fresh example IRI."""
        declared = set(self.stream_iris())
        for _, _, iri in self.window_iris():
            if iri not in declared:
                return iri
        return next(f"{FALLBACK_STREAM_IRI}{n or ''}" for n in range(1000) if f"{FALLBACK_STREAM_IRI}{n or ''}" not in declared)

    def use_several_streams(self) -> bool:
        """``stream: X`` → ``streams: {IRI: X}`` (IRI of the queries' first window), sizes included; one undo step."""
        if "streams" in self.raw or self.raw.get("stream") is None:
            return False
        raw = with_several_streams(self.raw, self.suggested_stream_iri())
        return self.replace(raw, description="Use several streams", origin="form")

    def use_one_stream(self) -> bool:
        """``streams: {IRI: X}`` → ``stream: X`` when exactly one stream is declared; one undo step
        (:func:`~rsp_workbench.gui.designer.stream_edits.with_one_stream`)."""
        if not self.several_streams:
            return False
        return self.replace(with_one_stream(self.raw), description="Use one stream", origin="form")

    def add_stream(self, iri: str | None = None, stream: Any = None) -> str:
        """Declare a new stream (by default a generated one over the first undeclared window IRI)."""
        iri = checked_new_iri(self.raw, iri if iri is not None else self.suggested_stream_iri())
        value = copy.deepcopy(stream if stream is not None else NEW_GENERATED_STREAM)
        self.set(("streams", iri), value)
        return iri

    def remove_stream(self, iri: str) -> bool:
        """Remove a declared stream and the sizes' overrides of it (one undo step); not the last one."""
        if iri not in self.stream_iris():
            return False
        return self.replace(without_stream(self.raw, iri), description=f"Remove stream <{iri}>", origin="form")

    def rename_stream(self, old: str, new: str) -> str:
        """Give a declared stream another IRI, in ``streams:`` and in the sizes (one undo step)."""
        new = new.strip().strip("<>").strip()
        if new == old or old not in self.stream_iris():
            return old
        new = checked_new_iri(self.raw, new)
        self.replace(with_renamed_stream(self.raw, old, new), description=f"Rename stream <{old}> to <{new}>", origin="form")
        return new

    # ------------------------------------------------------------------ files
    def _file_label(self) -> str:
        return str(self.file) if self.file else "<designer>"

    def load_text(self, text: str, file: Path | None = None, *, template: bool = False) -> UserError | None:
        """Load a document; a file whose YAML does not parse loads empty with ``yaml_error`` set.
        A ``template`` (a shipped sample) is never overwritten: Save asks for a new place."""
        from rsp_workbench.experiment.source import load_yaml

        self.template = template
        self.file = Path(file) if file else None
        self.base_dir = self.file.parent if self.file else None
        self._undo.clear()
        self._redo.clear()
        try:
            raw, _ = load_yaml(text, self._file_label())
            self.yaml_error = None
        except UserError as error:
            raw, self.yaml_error = {}, error
        self.raw = raw if isinstance(raw, dict) else {}
        self.source_text = text
        self._saved_raw = copy.deepcopy(self.raw)
        self.validation = self.validate() if self.yaml_error is None else Validation(error=self.yaml_error, yaml_error=True)
        for callback in list(self._listeners):
            callback(Change((), "load"))
        return self.yaml_error

    def load(self, path: str | Path, *, template: bool = False) -> UserError | None:
        """Open a file; one that is no experiment (README.md) raises a UserError, the document stays."""
        path = Path(path)
        text = read_experiment_text(path)
        return self.load_text(text, path, template=template)

    def new(self) -> None:
        self.load_text(dump_yaml(NEW_EXPERIMENT))

    def save(self, path: str | Path | None = None) -> Path:
        """Write to ``path`` (or the file), creating its folder; UserError (model unchanged) if it cannot."""
        target = Path(path) if path else (None if self.template else self.file)
        if target is None:
            raise UserError("a sample opens as a template: choose where to save your copy" if self.template
                            else "choose a file name to save to")
        from rsp_workbench.gui.designer.save_as_paths import moved_paths

        # paths are relative to the file: saved into another folder, they must follow it (a new
        # document's paths are taken as written, relative to the file it is first saved as)
        raw, moved = moved_paths(self.raw, self.base_dir, target.parent) if self.base_dir else (self.raw, [])
        text = self._edited_text(raw) if moved else self.yaml_text()
        write_text_file(target, text)  # fails before anything of the model changed: the edit stays
        self.moved_paths = moved
        if self.moved_paths:
            self._push(Command(f"Rewrite {len(self.moved_paths)} path(s) for {target.parent}", (),
                               copy.deepcopy(self.raw), copy.deepcopy(raw), False, self.yaml_text(), text))
            self.raw, self.source_text = raw, text
        self.file = target
        self.base_dir = target.parent
        self.template = False
        self._saved_raw = copy.deepcopy(self.raw)
        self.validation = self.validate()
        for callback in list(self._listeners):
            callback(Change((), "save"))
        return target

    # ------------------------------------------------------------------ validation
    def revalidate(self) -> None:
        """A file the document reads (a query file) changed: validate again and tell the views."""
        self.validation = self.validate()
        for callback in list(self._listeners):
            callback(Change((), "files"))

    def validate(self) -> Validation:
        """Validate with the loader on the dumped text (so lines match the YAML pane)."""
        from rsp_workbench.experiment import loads_experiment

        text = self.shown_text()
        window_error = located_window_variable_error(self)
        if window_error is not None:
            return Validation(error=window_error)
        try:
            experiment = loads_experiment(text, file=self._file_label(), base_dir=self.base_dir or Path.cwd())
        except UserError as error:
            return Validation(error=error)
        query_error = self._check_queries(experiment) or missing_program_error(experiment, self._file_label())
        if query_error is not None:
            return Validation(experiment=experiment, error=query_error)
        return Validation(experiment=experiment)

    def _check_queries(self, experiment: Any) -> UserError | None:
        """Parse each query filled with the first variable combination (the loader does not parse SPARQL)."""
        from rsp_workbench.experiment.runs import variable_combinations
        from rsp_workbench.query.template import fill_template
        from rsp_workbench.query.parser import parse_query

        combinations = variable_combinations(experiment) or [{}]
        for index, query in enumerate(experiment.queries):
            try:
                text = fill_template(query.template, combinations[0])
                parse_query(text, query.syntax, source=f"queries[{index}]")
            except UserError as error:
                where = f"line {error.line}: " if error.line else ""
                return UserError(f"{where}{error.message}", file=self._file_label(),
                                 field=f"queries[{index}].{'file' if query.file else 'text'}")
            except (KeyError, ValueError) as error:
                return UserError(str(error), field=f"queries[{index}].text")
        return None


def located_window_variable_error(model: DesignerModel) -> UserError | None:
    """:func:`window_variable_error` of the document, located at its line in the text."""
    from rsp_workbench.experiment.source import load_yaml

    queries = model.get(("queries",), [])
    templates = []
    for index, query in enumerate(queries if isinstance(queries, list) else []):
        syntax = query.get("syntax") if isinstance(query, dict) else None
        templates.append((model.query_template(index)[0], syntax if isinstance(syntax, str) else None))
    error = window_variable_error(model.raw, templates)
    if error is None:
        return None
    try:
        line = load_yaml(model.yaml_text(), model._file_label())[1].line(error.field or "")
    except UserError:
        line = None
    return UserError(error.message, file=model._file_label(), line=line, field=error.field)


def missing_program_error(experiment: Any, file: str) -> UserError | None:
    """An external engine whose program is not there: said while designing, not after the run's
    confirmation (where it also failed the built-in engines' runs). A bare name is looked up on
    PATH, an absolute path must exist; a relative path depends on the run's folder: not checked."""
    import shutil

    for index, engine in enumerate(experiment.engines):
        command = engine.command
        program = str(command[0]) if command else ""
        if not program or ("/" in program and not Path(program).is_absolute()):
            continue
        found = Path(program).is_file() if "/" in program else shutil.which(program) is not None
        if not found:
            where = "does not exist" if "/" in program else "is not found on PATH"
            return UserError(f"the program {program!r} {where}", file=file, field=f"engines[{index}].parameters.command")
    return None


def variable_values(raw: Mapping[str, Any], name: str) -> list[tuple[str, Any]]:
    """Where the document gives variable ``name`` a value — ``variables.NAME``, ``sweep.NAME[i]``,
    ``cases[i].NAME`` — each with that value (the field paths the designer marks)."""
    found: list[tuple[str, Any]] = []
    variables, sweep, cases = raw.get("variables"), raw.get("sweep"), raw.get("cases")
    if isinstance(variables, dict) and name in variables:
        found.append((f"variables.{name}", variables[name]))
    if isinstance(sweep, dict) and isinstance(sweep.get(name), list):
        found += [(f"sweep.{name}[{position}]", value) for position, value in enumerate(sweep[name])]
    for position, case in enumerate(cases if isinstance(cases, list) else []):
        if isinstance(case, dict) and name in case:
            found.append((f"cases[{position}].{name}", case[name]))
    return found


def window_variable_error(raw: Mapping[str, Any], templates: Sequence[tuple[str, str | None]]) -> UserError | None:
    """A window size or slide written as ``${NAME}`` whose value is no positive duration, said at the
    variable (``window size must be positive (variables.WSIZE = -5s)``): the query is right, and the
    parser's "RANGE needs a duration … found '-'" would blame it. ``templates``: (text, syntax) per query."""
    from rsp_workbench.core.time import parse_duration
    from rsp_workbench.gui.designer.window_clauses import WindowField, query_windows

    for template, syntax in templates:
        for window in query_windows(template, syntax):
            for part, text in (("size", window.size), ("slide", window.slide)):
                name = WindowField.variable(text)
                for where, value in variable_values(raw, name) if name else ():
                    try:
                        positive, rule = parse_duration(value, field=where) > 0, "must be positive"
                    except UserError:
                        negative = str(value).strip().startswith("-")
                        positive, rule = False, "must be positive" if negative else "must be a duration such as 5s"
                    if not positive:
                        return UserError(f"window {part} {rule} ({where} = {value})", field=where)
    return None


def read_experiment_text(path: Path) -> str:
    """The text of an experiment file, or a UserError: unreadable, or not an experiment at all (a
    file not named .yaml/.yml whose text is no YAML mapping — a README opened by mistake)."""
    from rsp_workbench.experiment.source import load_yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"cannot read the file: {error}", file=str(path)) from None
    if path.suffix.lower() not in EXPERIMENT_SUFFIXES:
        try:
            raw, _ = load_yaml(text, str(path))
        except UserError:
            raw = None
        if not isinstance(raw, dict):
            raise UserError("not an experiment file (an experiment is a YAML mapping of name, stream, queries, "
                            "engines …); not opened", file=str(path))
    return text


def write_text_file(target: Path, text: str) -> None:
    """Write the file atomically, creating its folder; any OSError becomes a one-line UserError."""
    from rsp_workbench.files import write_text_atomic

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, text)
    except OSError as error:
        from rsp_workbench.files import PARTIAL

        target.with_name(target.name + PARTIAL).unlink(missing_ok=True) if target.parent.is_dir() else None
        reason = error.strerror or type(error).__name__
        where = f" ({error.filename})" if error.filename and str(error.filename) != str(target) else ""
        raise UserError(f"cannot save: {reason}{where}; nothing was written, the edits are kept", file=str(target)) from None


def _assign(root: dict[str, Any], path: FieldPath, value: Any) -> None:
    node: Any = root
    for depth, key in enumerate(path[:-1]):
        following = path[depth + 1]
        if isinstance(node, dict):
            if not isinstance(node.get(key), (dict, list)):
                node[key] = [] if isinstance(following, int) else {}
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int):
            while len(node) <= key:
                node.append({})
            if not isinstance(node[key], (dict, list)):
                node[key] = {}
            node = node[key]
    last = path[-1]
    if value is MISSING:
        if isinstance(node, dict):
            node.pop(last, None)
        elif isinstance(node, list) and isinstance(last, int) and 0 <= last < len(node):
            del node[last]
        _prune(root, path[:-1])
        return
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list) and isinstance(last, int):
        while len(node) <= last:
            node.append(None)
        node[last] = value


def _prune(root: dict[str, Any], path: FieldPath) -> None:
    """Remove mappings left empty by a removal (``semantics: {}`` → gone), deepest first."""
    for depth in range(len(path), 0, -1):
        parent: Any = root
        for key in path[: depth - 1]:
            parent = parent[key]
        key = path[depth - 1]
        child = parent[key] if isinstance(parent, dict) and key in parent else None
        if isinstance(child, dict) and not child and isinstance(parent, dict):
            del parent[key]
        else:
            break
