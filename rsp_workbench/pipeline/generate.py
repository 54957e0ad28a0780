"""Run a stream generator to a file: ``generate(name, params, out, fmt)`` with progress + cancel.

Generator plug-in interface
===========================
A generator is a pure module ``rsp_workbench.generators.<name>`` (registered in
``rsp_workbench.generators.GENERATOR_MODULES``; no pyspark import) that defines:

``SPEC: GeneratorSpec``
    Parameters (validation and docs).
``prepare(params: Mapping[str, Any]) -> plan``  *(optional; default: ``SPEC.resolve(params)``)*
    Validate (``UserError`` with ``field="param NAME"``) and do the inherently sequential
    work on the driver (e.g. RNG draws that fix the schedule). The plan must be picklable:
    Spark ships it to executors.
``estimate_elements(plan) -> int | None``  *(optional)*
    Expected number of stream elements, for the progress bar.

and at least one way to produce elements, *in time order*:

``iter_chunks(plan) -> Iterator[ElementChunk]`` or ``iter_elements(plan) -> Iterator[StreamElement]``
    Sequential: the whole stream from one process.
``partition_keys(plan) -> Sequence[key]`` plus
``chunks_for_key(key, plan) -> Iterator[ElementChunk]`` or ``elements_for_key(key, plan) -> Iterator[StreamElement]``
    Parallel: each key (picklable) is generated independently, in time order within the
    key. Spark groups consecutive keys into tasks of about ``PARTITION_ELEMENTS``
    elements (when ``estimate_elements`` tells the total); a key should stay well below
    ~1 M elements, since a task's rendered output travels to the driver in one piece. If
    the module sets ``KEYS_IN_TIME_ORDER = True`` the stream is the concatenation of the
    keys in order; otherwise the stream is all elements ordered by ``t``, ties by key
    position then by position within the key (a stable merge).

The local engine uses the first of ``iter_chunks``, ``iter_elements``, keys; the Spark
engine uses the keys (or runs the sequential form as a single task). Both must give the
same stream, byte for byte.

Optional constants: ``PREFERRED_ENGINE = "local" | "spark"`` (default ``"spark"``; the engine
used when the caller says ``"auto"``) and ``ITEM_NAME`` (e.g. ``"observations"``, a
generator-level unit counted next to the elements).

``ElementChunk`` (structural; see :class:`ElementChunk`) is a batch of consecutive
elements that renders itself in bulk: generators with a fast columnar form (sg1) implement
it; element-wise generators get :class:`ElementListChunk` automatically.

Engines: ``local`` runs the sequential form in this process (or iterates the keys);
``spark`` parallelises the keys on the session from :mod:`rsp_workbench.pipeline.spark`, formats
on the executors and streams the chunks back in order to the driver, which writes the single
output file. Either way output goes to ``PATH.partial`` and is renamed at the end, so a
failed or cancelled run leaves nothing that looks complete.
"""

from __future__ import annotations

import contextlib
import heapq
import importlib
import itertools
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence

from rsp_workbench.errors import UserError, file_error
from rsp_workbench.generators import GENERATOR_MODULES, generator_spec
from rsp_workbench.streams.model import StreamElement
from rsp_workbench.streams.writers import format_nquads_line, format_yabench_line

OUTPUT_FORMATS = ("yabench", "nquads", "parquet")
ENGINES = ("auto", "local", "spark")
CHUNK_ELEMENTS = 100_000
PARTITION_ELEMENTS = 200_000  # ~40 MB of text per Spark task result (1 GB driver heap)


class ElementChunk(Protocol):
    """A run of consecutive stream elements that can render itself in bulk."""

    @property
    def elements(self) -> int: ...  # stream elements (triples/quads) in the chunk

    @property
    def items(self) -> int: ...  # generator-level units (e.g. observations)

    def to_text(self, fmt: str) -> str: ...  # "yabench" or "nquads" lines

    def to_columns(self) -> tuple[list[str], list[str], list[str], list[str | None], list[int]]: ...


_TEXT_FORMATTERS = {"yabench": format_yabench_line, "nquads": format_nquads_line}


@dataclass(frozen=True)
class ElementListChunk:
    """An :class:`ElementChunk` over plain :class:`StreamElement` values (element-wise generators)."""

    rows: tuple[StreamElement, ...]

    @property
    def elements(self) -> int:
        return len(self.rows)

    @property
    def items(self) -> int:
        return len(self.rows)

    def to_text(self, fmt: str) -> str:
        return "".join(map(_TEXT_FORMATTERS[fmt], self.rows))

    def to_columns(self) -> tuple[list[str], list[str], list[str], list[str | None], list[int]]:
        return (
            [e.subject for e in self.rows],
            [e.predicate for e in self.rows],
            [e.object for e in self.rows],
            [e.graph for e in self.rows],
            [e.t for e in self.rows],
        )


def chunk_elements(elements: Iterable[StreamElement], size: int = CHUNK_ELEMENTS) -> Iterator[ElementListChunk]:
    """Group an element iterator into :class:`ElementListChunk` values of ``size``."""
    iterator = iter(elements)
    while True:
        rows = tuple(itertools.islice(iterator, size))
        if not rows:
            return
        yield ElementListChunk(rows)


@dataclass(frozen=True)
class GenerationProgress:
    """Progress so far (``total_elements`` is None when the generator cannot tell)."""

    elements: int
    items: int
    total_elements: int | None
    seconds: float


@dataclass(frozen=True)
class GenerationResult:
    """What a finished generation wrote."""

    generator: str
    path: Path
    format: str
    engine: str
    elements: int
    items: int
    item_name: str
    seconds: float

    @property
    def elements_per_second(self) -> float:
        return self.elements / self.seconds if self.seconds > 0 else float("inf")


class GenerationCancelled(Exception):
    """The run was cancelled; no output file was left behind."""


class TaskState:
    """Cancellation flag + progress callback shared between a run and its controller.

    ``cancel()`` may be called from any thread (GUI, signal handler); it also cancels the
    Spark job group of a running Spark generation.
    """

    def __init__(self, on_progress: Callable[[GenerationProgress], None] | None = None) -> None:
        self._cancelled = threading.Event()
        self.on_progress = on_progress
        self.job_group: str | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()
        if self.job_group is not None:
            from rsp_workbench.pipeline.spark import cancel_job_group

            cancel_job_group(self.job_group)

    def report(self, progress: GenerationProgress) -> None:
        if self.on_progress is not None:
            self.on_progress(progress)


def generator_module(name: str) -> ModuleType:
    """The generator's pure module (UserError for unknown names)."""
    generator_spec(name)  # raises the UserError listing the known generators
    try:
        return importlib.import_module(GENERATOR_MODULES[name])
    except ModuleNotFoundError:
        raise UserError(f"generator {name!r} is not implemented yet", field="generator") from None


def prepare_plan(module: ModuleType, params: Mapping[str, Any]) -> Any:
    """The module's plan for ``params`` (``prepare`` or the resolved parameters)."""
    prepare = getattr(module, "prepare", None)
    if prepare is not None:
        return prepare(params)
    return module.SPEC.resolve(params)


def estimated_elements(generator: str, params: Mapping[str, Any]) -> int | None:
    """How many elements ``generator`` will write for ``params``, before writing any (None: it cannot say)."""
    module = generator_module(generator)
    estimate = getattr(module, "estimate_elements", None)
    return estimate(prepare_plan(module, params)) if estimate is not None else None


def _local_chunks(module: ModuleType, plan: Any) -> Iterator[ElementChunk]:
    """The stream's chunks in order, in this process."""
    if hasattr(module, "iter_chunks"):
        yield from module.iter_chunks(plan)
        return
    if hasattr(module, "iter_elements"):
        yield from chunk_elements(module.iter_elements(plan))
        return
    keys = list(module.partition_keys(plan))
    if getattr(module, "KEYS_IN_TIME_ORDER", False):
        for key in keys:
            yield from _key_chunks(module, key, plan)
        return
    streams = [_key_elements(module, key, plan) for key in keys]
    yield from chunk_elements(heapq.merge(*streams, key=lambda element: element.t))


def _key_chunks(module: ModuleType, key: Any, plan: Any) -> Iterator[ElementChunk]:
    if hasattr(module, "chunks_for_key"):
        return iter(module.chunks_for_key(key, plan))
    return chunk_elements(module.elements_for_key(key, plan))


def _key_elements(module: ModuleType, key: Any, plan: Any) -> Iterator[StreamElement]:
    if hasattr(module, "elements_for_key"):
        yield from module.elements_for_key(key, plan)
        return
    yield from chunks_to_elements(module.chunks_for_key(key, plan))


def chunks_to_elements(chunks: Iterable[ElementChunk]) -> Iterator[StreamElement]:
    """The elements of a sequence of chunks, in order."""
    for chunk in chunks:
        subjects, predicates, objects, graphs, times = chunk.to_columns()
        for row in zip(subjects, predicates, objects, times, graphs):
            yield StreamElement(*row)


class _Output:
    """Writes rendered chunks to ``PATH.partial``; ``commit`` renames, ``abort`` deletes."""

    def __init__(self, path: Path, fmt: str) -> None:
        self.path = path
        self.format = fmt
        self.partial = path.with_name(path.name + ".partial")
        path.parent.mkdir(parents=True, exist_ok=True)
        self._parquet: Any = None
        self._handle: Any = None
        if fmt == "parquet":
            import pyarrow.parquet as pq

            from rsp_workbench.streams.parquet import SCHEMA

            self._schema = SCHEMA
            self._parquet = pq.ParquetWriter(str(self.partial), SCHEMA, compression="zstd", write_page_checksum=True)
        else:
            self._handle = open(self.partial, "wb", buffering=1 << 20)

    def write_payload(self, payload: Any) -> None:
        """Write a payload made by :func:`render_chunk`."""
        try:
            if self._parquet is not None:
                import pyarrow as pa

                self._parquet.write_table(pa.Table.from_pydict(dict(zip(self._schema.names, payload)), schema=self._schema))
            else:
                self._handle.write(payload)
        except OSError as error:  # a full disk, pyarrow's own errors: name the file
            raise file_error(error, self.path) from None

    def commit(self) -> None:
        try:
            if self._parquet is not None:
                self._parquet.close()
                self._parquet = None
            if self._handle is not None:
                self._handle.close()
                self._handle = None
            os.replace(self.partial, self.path)
        except OSError as error:
            raise file_error(error, self.path) from None

    def abort(self) -> None:
        try:
            if self._parquet is not None:
                self._parquet.close()
            if self._handle is not None:
                self._handle.close()
        except OSError:
            pass  # the file is being discarded (its buffer may not fit on a full disk): the first error is the one to show
        finally:
            self._parquet = self._handle = None
            self.partial.unlink(missing_ok=True)


def render_chunk(chunk: ElementChunk, fmt: str) -> Any:
    """A chunk as bytes (text formats) or column lists (parquet); runs on executors too."""
    if fmt == "parquet":
        return chunk.to_columns()
    return chunk.to_text(fmt).encode("utf-8")


def _spark_payloads(
    module: ModuleType, plan: Any, fmt: str, state: TaskState, master: str | None, total: int | None
) -> Iterator[tuple[int, int, Any]]:
    """``(elements, items, payload)`` per chunk, generated on Spark, streamed back in order."""
    from rsp_workbench.pipeline.spark import get_spark, job_group

    spark = get_spark(master)
    module_name = module.__name__
    ordered = getattr(module, "KEYS_IN_TIME_ORDER", False)
    has_keys = hasattr(module, "partition_keys")
    keys = list(module.partition_keys(plan)) if has_keys else [None]
    slices = len(keys)
    if total is not None and has_keys:
        slices = max(1, min(len(keys), -(-total // PARTITION_ELEMENTS)))
    slices = max(slices, min(len(keys), spark.sparkContext.defaultParallelism))
    sort_partitions = max(1, -(-(total or 0) // PARTITION_ELEMENTS))

    def run_partition(indexed_keys: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, int, Any]]:
        generator = importlib.import_module(module_name)
        for _, key in indexed_keys:
            chunks = _local_chunks(generator, plan) if key is None else _key_chunks(generator, key, plan)
            for chunk in chunks:
                yield chunk.elements, chunk.items, render_chunk(chunk, fmt)

    group = f"rspwb-generate-{uuid.uuid4().hex[:12]}"
    state.job_group = group
    if state.cancelled:  # cancelled while the JVM started
        raise GenerationCancelled("generation cancelled before the Spark job started")
    try:
        with job_group(spark, group, f"generate {module_name} ({len(keys)} partitions)"), _cancel_watch(state, group):
            context = spark.sparkContext
            rdd = context.parallelize(list(enumerate(keys)), slices)
            if ordered or not has_keys:
                yield from rdd.mapPartitions(run_partition).toLocalIterator(prefetchPartitions=True)
            else:
                yield from _spark_sorted_payloads(spark, rdd, module_name, plan, fmt, sort_partitions)
    finally:
        state.job_group = None


@contextlib.contextmanager
def _cancel_watch(state: TaskState, group: str) -> Iterator[None]:
    """While the block runs, cancel ``group``'s jobs whenever ``state`` is cancelled (polled every 0.2 s).

    A cancel that lands between two jobs (the sort of unordered keys runs several) or just
    before the first one is submitted still stops them; the JVM is called from this thread,
    never from a signal handler.
    """
    from rsp_workbench.pipeline.spark import cancel_job_group

    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.2):
            if state.cancelled:
                cancel_job_group(group)

    watcher = threading.Thread(target=watch, name="rspwb-generate-cancel", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join(timeout=2)


def _spark_sorted_payloads(
    spark: Any, rdd: Any, module_name: str, plan: Any, fmt: str, partitions: int
) -> Iterator[tuple[int, int, Any]]:
    """Unordered keys: rows → DataFrame range-partitioned and sorted by (t, key, seq) → rendered chunks."""
    from pyspark.sql import types as T

    def rows(indexed_keys: Iterable[tuple[int, Any]]) -> Iterator[tuple[Any, ...]]:
        generator = importlib.import_module(module_name)
        for index, key in indexed_keys:
            for seq, e in enumerate(_key_elements(generator, key, plan)):
                yield (e.subject, e.predicate, e.object, e.graph, e.t, index, seq)

    schema = T.StructType(
        [
            T.StructField("subject", T.StringType(), False),
            T.StructField("predicate", T.StringType(), False),
            T.StructField("object", T.StringType(), False),
            T.StructField("graph", T.StringType(), True),
            T.StructField("t", T.LongType(), False),
            T.StructField("k", T.IntegerType(), False),
            T.StructField("seq", T.LongType(), False),
        ]
    )
    frame = spark.createDataFrame(rdd.mapPartitions(rows), schema)
    ordered = frame.repartitionByRange(partitions, "t", "k", "seq").sortWithinPartitions("t", "k", "seq")

    def render(partition: Iterable[Any]) -> Iterator[tuple[int, int, Any]]:
        elements = (StreamElement(r[0], r[1], r[2], r[4], r[3]) for r in partition)
        for chunk in chunk_elements(elements):
            yield chunk.elements, chunk.items, render_chunk(chunk, fmt)

    yield from ordered.rdd.mapPartitions(render).toLocalIterator(prefetchPartitions=True)


def resolve_engine(module: ModuleType, engine: str) -> str:
    """``auto`` → the module's ``PREFERRED_ENGINE`` (default spark)."""
    if engine not in ENGINES:
        raise UserError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}", field="engine")
    if engine == "auto":
        return getattr(module, "PREFERRED_ENGINE", "spark")
    return engine


def _item_name(module: ModuleType) -> str:
    """``ITEM_NAME`` for chunk-producing generators; element-wise ones count elements."""
    if hasattr(module, "iter_chunks") or hasattr(module, "chunks_for_key"):
        return getattr(module, "ITEM_NAME", "elements")
    return "elements"


def generate(
    generator: str,
    params: Mapping[str, Any],
    out: str | os.PathLike[str],
    fmt: str = "yabench",
    *,
    engine: str = "auto",
    spark_master: str | None = None,
    state: TaskState | None = None,
    progress_interval: float = 0.1,
    flow: Any = None,
) -> GenerationResult:
    """Generate ``generator`` with ``params`` into ``out`` (``fmt``: yabench, nquads, parquet).

    ``flow`` (a ``FlowShape`` or its mapping) re-timestamps the generated triples into
    stimuli shaped like Heaven's streamer; cutting a stream into stimuli is sequential,
    so a flow runs on the local path. Raises ``UserError`` for bad input and
    :class:`GenerationCancelled` when ``state`` is cancelled; in both cases no file named
    ``out`` is created.
    """
    if fmt not in OUTPUT_FORMATS:
        raise UserError(f"unknown output format {fmt!r}; expected one of {', '.join(OUTPUT_FORMATS)}", field="format")
    state = state or TaskState()
    module = generator_module(generator)
    chosen = resolve_engine(module, engine)
    started = time.perf_counter()
    plan = prepare_plan(module, params)
    estimate = getattr(module, "estimate_elements", None)
    total = estimate(plan) if estimate is not None else None
    path = Path(out)
    if flow is not None:
        from rsp_workbench.generators.flows import apply_flow

        chosen, total = "local", None
        shaped = chunk_elements(apply_flow(chunks_to_elements(_local_chunks(module, plan)), flow))
        payloads: Iterator[tuple[int, int, Any]] = (
            (chunk.elements, chunk.items, render_chunk(chunk, fmt)) for chunk in shaped
        )
    elif chosen == "local":
        payloads = (
            (chunk.elements, chunk.items, render_chunk(chunk, fmt)) for chunk in _local_chunks(module, plan)
        )
    else:
        payloads = _spark_payloads(module, plan, fmt, state, spark_master, total)
    output = _Output(path, fmt)
    elements = items = 0
    last_report = 0.0
    try:
        for chunk_elements_count, chunk_items, payload in payloads:
            if state.cancelled:
                raise GenerationCancelled(f"generation of {path} cancelled")
            output.write_payload(payload)
            elements += chunk_elements_count
            items += chunk_items
            now = time.perf_counter()
            if now - last_report >= progress_interval:
                last_report = now
                state.report(GenerationProgress(elements, items, total, now - started))
        if state.cancelled:
            raise GenerationCancelled(f"generation of {path} cancelled")
        output.commit()
    except BaseException as error:
        output.abort()
        if state.cancelled and not isinstance(error, (GenerationCancelled, UserError)):
            raise GenerationCancelled(f"generation of {path} cancelled") from error
        raise
    finally:
        close = getattr(payloads, "close", None)
        if close is not None:
            close()
    seconds = time.perf_counter() - started
    state.report(GenerationProgress(elements, items, total, seconds))
    return GenerationResult(
        generator=generator,
        path=path,
        format=fmt,
        engine=chosen,
        elements=elements,
        items=items,
        item_name=_item_name(module),
        seconds=seconds,
    )


def run_generator_chunks(generator: str, params: Mapping[str, Any]) -> Sequence[ElementChunk]:
    """All chunks of a (small) generation in memory, locally (tests, previews)."""
    module = generator_module(generator)
    return list(_local_chunks(module, prepare_plan(module, params)))
