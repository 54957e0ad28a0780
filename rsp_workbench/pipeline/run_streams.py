"""The streams of ``rspwb run``: each distinct stream generated once into the bundle
(:func:`prepare_streams`), and a run's streams and stimuli read from their files as the stand
sends them (:func:`run_inputs`, with the streams last read kept for the next runs of a case).

Split from `run_experiment`: generating and reading streams is one concern of its own.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from rsp_workbench.experiment.model import Experiment, RunSpec, RunStream
from rsp_workbench.pipeline.run_task import ExperimentProgress, ProgressCallback, RunTask, StreamRef
from rsp_workbench.results.bundle import STREAMS_DIR

STREAM_FORMATS = ("parquet", "nquads")
_STREAM_SUFFIX = {"parquet": ".parquet", "nquads": ".nq"}


def stream_key(stream: RunStream) -> tuple[Any, ...]:
    """What makes a stream distinct: its IRI (``streams:``) and its file, or generator + params + flow."""
    import json

    if stream.spec.generator is None:
        return (stream.iri, "file", str(stream.spec.file))
    flow = None if stream.flow is None else (stream.flow.shape, json.dumps(dict(stream.flow.settings), sort_keys=True, default=str))
    return (stream.iri, stream.spec.generator, json.dumps(dict(stream.params), sort_keys=True, default=str), flow)


def _cancel_state(cancel: threading.Event) -> Any:
    """A generation TaskState whose cancel flag is the experiment's cancel Event."""
    from rsp_workbench.pipeline.generate import TaskState

    class _State(TaskState):
        @property
        def cancelled(self) -> bool:
            return cancel.is_set()

    return _State()


@contextmanager
def on_cancel(cancel: threading.Event, action: Callable[[], None], name: str) -> Iterator[None]:
    """Call ``action`` once if ``cancel`` is set while the block runs (e.g. cancel a Spark job group now,
    not when the job ends); the watcher thread ends with the block."""
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.2):
            if cancel.is_set():
                action()
                return

    watcher = threading.Thread(target=watch, name=name, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join(timeout=1)


def generated_stream_count(runs: Sequence[RunSpec]) -> int:
    """How many distinct streams :func:`prepare_streams` generates for ``runs``."""
    return len({stream_key(stream) for spec in runs for stream in spec.streams if stream.spec.generator is not None})


def prepare_streams(
    experiment: Experiment, runs: Sequence[RunSpec], out: Path, *, fmt: str, cancel: threading.Event,
    progress: ProgressCallback,
) -> dict[tuple[Any, ...], StreamRef]:
    """Generate each distinct (IRI, generator, params, flow) once into ``streams/``; reference files.

    Every stream of every run gets a ref (keyed by :func:`stream_key`), so a ``streams:``
    experiment has one manifest entry per stream IRI (per repetition, if generated).
    """
    from rsp_workbench.pipeline.generate import generate
    from rsp_workbench.streams.readers import detect_format

    refs: dict[tuple[Any, ...], StreamRef] = {}
    to_generate = generated_stream_count(runs)
    generated = 0
    for run_stream in (stream for spec in runs for stream in spec.streams):
        key = stream_key(run_stream)
        if key in refs:
            continue
        if cancel.is_set():
            break
        ident = f"stream{len(refs)}"
        stream, params, iri = run_stream.spec, run_stream.params, run_stream.iri
        if stream.generator is None:
            assert stream.file is not None
            path = stream.file  # the loader already resolved it against the experiment's folder
            refs[key] = StreamRef(ident, str(path.resolve()), stream.format or detect_format(path),
                                  interval_ms=stream.interval_ms or 1000, iri=iri)
            continue
        target = out / STREAMS_DIR / f"{ident}{_STREAM_SUFFIX[fmt]}"
        progress(ExperimentProgress("stream", f"generating {ident}{f' <{iri}>' if iri else ''}: {stream.generator} "
                                    + ", ".join(f"{k}={v}" for k, v in params.items()),
                                    done=generated, total=to_generate))
        generated += 1
        flow = None if run_stream.flow is None else {"shape": run_stream.flow.shape, **dict(run_stream.flow.settings)}
        state = _cancel_state(cancel)
        with on_cancel(cancel, state.cancel, "rspwb-generate-cancel"):  # interrupts a running Spark job
            result = generate(stream.generator, dict(params), target, fmt, engine="auto",
                              spark_master=experiment.spark_master, state=state, flow=flow)
        refs[key] = StreamRef(ident, f"{STREAMS_DIR}/{target.name}", fmt, stream.generator, dict(params),
                              flow, elements=result.elements, iri=iri)
    return refs


# --- one run's streams --------------------------------------------------------------------

_STREAM_CACHE: dict[tuple[Any, ...], Any] = {}
_STREAM_CACHE_LOCK = threading.Lock()


def _elements(stream: StreamRef, bundle: Path, keep: Sequence[StreamRef] = ()) -> Any:
    """The stream's elements, as a `StreamFile` read only when needed. The streams last read are
    kept (runs of one case share them): this one and those in ``keep`` (the other streams of
    the same run)."""
    from rsp_workbench.streams.readers import StreamFile

    def key_of(ref: StreamRef) -> tuple[Any, ...]:
        path = ref.path if os.path.isabs(ref.path) else str(bundle / ref.path)
        try:  # a stream regenerated into the same bundle is another stream
            stat = os.stat(path)
            return (path, ref.format, stat.st_size, stat.st_mtime_ns)
        except OSError:
            return (path, ref.format)

    key = key_of(stream)
    with _STREAM_CACHE_LOCK:
        if key not in _STREAM_CACHE:
            wanted = {key_of(ref) for ref in keep}
            for old in [k for k in _STREAM_CACHE if k not in wanted]:
                del _STREAM_CACHE[old]
            _STREAM_CACHE[key] = StreamFile(key[0], stream.format, interval_ms=stream.interval_ms)
        return _STREAM_CACHE[key]


class _StimuliOf:
    """The stimuli of a run's streams, grouped as the stand sends them, read from their files
    each time they are iterated (never all held: a BIG stream is 2.1 M elements).

    Untagged: the stimuli of the one stream. Tagged: the merged, time-ordered stimuli of the
    streams by IRI, each element tagged with its stream (`rsp_workbench.engine.iter_merged_stimuli`,
    which reads the files side by side, one element ahead each).
    """

    def __init__(self, streams: Mapping[str, Any], *, tagged: bool) -> None:
        assert tagged or len(streams) == 1
        self.streams = streams
        self.tagged = tagged
        self._count: int | None = None

    def __iter__(self) -> Iterator[Any]:
        from rsp_workbench.engine import iter_merged_stimuli
        from rsp_workbench.stand.streamer import iter_stimuli

        if self.tagged:
            return iter_merged_stimuli({iri: elements.read() for iri, elements in self.streams.items()})
        return iter_stimuli(next(iter(self.streams.values())).read())

    def __len__(self) -> int:
        from rsp_workbench.streams.readers import instants_of

        if self._count is None:
            self._count = instants_of(list(self.streams.values()))
        return self._count


def run_inputs(task: RunTask, query: Any) -> tuple[dict[str, Any], Any]:
    """The query's streams by IRI and the stimuli the stand feeds (RSP-QL Def. 14).

    ``stream:``: every window reads the one stream (each IRI of the query gets its
    elements). ``streams:``: each window reads the stream of its IRI, and the stimuli are
    the merged, time-ordered elements of the streams the query reads, each tagged with
    its stream, so an element only enters the windows over its own stream. A window-less
    query (an eviction join) reads every stream. The streams are `StreamFile`s, and the
    stimuli are read from their files as the stand sends them (`_StimuliOf`).
    """
    bundle = Path(task.runs_dir).parent
    if task.stream.iri is None:
        elements = _elements(task.stream, bundle)
        streams = {iri: elements for iri in query.streams}
        # one stream (or a window-less query, e.g. an eviction join over the whole stream): plain stimuli
        if len(streams) > 1:
            return streams, _StimuliOf(streams, tagged=True)
        return streams or {"": elements}, _StimuliOf({"": elements}, tagged=False)
    used = [ref for ref in task.streams if ref.iri in query.streams] or list(task.streams)
    streams = {str(ref.iri): _elements(ref, bundle, keep=used) for ref in used}
    return streams, _StimuliOf(streams, tagged=True)
