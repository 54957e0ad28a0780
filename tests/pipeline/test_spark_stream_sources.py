"""Spark reads every stream format itself: the Python readers' rows and their file:line errors.

The ranges are made small (`RANGE_BYTES`) so that every file below is read by several tasks,
each knowing only where its range starts.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rsp_workbench.errors import UserError
from rsp_workbench.streams.model import StreamSource
from rsp_workbench.streams.reader_common import ReadReport
from rsp_workbench.streams.readers import read_stream
from tests.paths import conformance_dir

EX = "http://ex.org/"
FLOAT = "http://www.w3.org/2001/XMLSchema#float"


def yabench_lines(count: int, start: int = 0) -> list[str]:
    return [f'<{EX}s{i % 7}> <{EX}p{i % 3}> "{i}" "{start + i // 5}" .' for i in range(count)]


ODD_YABENCH = [
    "# a comment",
    f'<{EX}a> <{EX}v> 76.0^^<{FLOAT}> "0" .',
    "",
    f'_:b1   <{EX}p>\t"caf\\u00e9"@fr "1" .   # trailing comment',
    f'<{EX}a> <{EX}p> "x\\"y" "1" .\r',
    *yabench_lines(40, start=2),
    "   ",
    f'<{EX}z> <{EX}p> <{EX}o> "99" .',
]


@pytest.fixture
def small_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    from rsp_workbench.pipeline import stream_sources

    monkeypatch.setattr(stream_sources, "RANGE_BYTES", 512)


def spark_rows(spark: Any, source: StreamSource) -> tuple[list[tuple[Any, ...]], ReadReport]:
    """The frame's ``(s, p, o, t)`` in ``pos`` order (checked to be 0, 1, 2, …) and the read report."""
    from rsp_workbench.pipeline.spark import job_group
    from rsp_workbench.pipeline.stream_sources import release, spark_stream

    with job_group(spark, "test-stream-sources", "stream sources"):
        stream = spark_stream(spark, source)
        try:
            rows = [tuple(row) for row in stream.frame.orderBy("pos").collect()]
        finally:
            release(stream)
    assert [row[4] for row in rows] == list(range(len(rows)))
    return [row[:4] for row in rows], stream.report


def python_rows(source: StreamSource) -> tuple[list[tuple[Any, ...]], ReadReport]:
    report = ReadReport(source=source.path)
    elements = list(read_stream(source.path, source.format, interval_ms=source.interval_ms,
                                on_disorder=source.on_disorder, report=report))  # type: ignore[arg-type]
    if source.on_disorder == "warn":
        elements.sort(key=lambda element: element.t)
    return [tuple(element)[:4] for element in elements], report


def python_error(source: StreamSource) -> str:
    with pytest.raises(UserError) as raised:
        python_rows(source)
    return str(raised.value)


def write(path: Path, lines: list[str]) -> str:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.spark
def test_every_format_gives_the_python_readers_rows(spark: Any, tmp_path: Path, small_ranges: None) -> None:
    from rsp_workbench.streams.parquet import ParquetStreamWriter
    from rsp_workbench.streams.writers import format_nquads_line

    yabench = write(tmp_path / "s.stream", ODD_YABENCH)
    elements = list(read_stream(yabench, "yabench"))
    nquads = tmp_path / "s.nq"
    nquads.write_text("# time graphs\n" + "".join(format_nquads_line(e) for e in elements), encoding="utf-8")
    csrbench_nquads = write(tmp_path / "oracle.nq", [
        f"<{EX}a> <{EX}p> <{EX}b> <{EX}g2> .", f"<{EX}g2> <{EX}hasTimestamp> \"20\" .",
        f"<{EX}c> <{EX}p> <{EX}d> <{EX}g1> .", f"<{EX}g1> <{EX}hasTimestamp> \"10\" <{EX}meta> .",
        f"<{EX}e> <{EX}p> <{EX}f> .",
    ])
    folder = tmp_path / "dir"
    folder.mkdir()
    for n in (0, 1, 3, 12):
        write(folder / f"data_{n:02d}.ttl", ["@prefix ex: <http://ex.org/> ."]
              + [f"ex:s{k} ex:p{n} ex:o{k} ." for k in range(n + 1)] + (["ex:s ex:p [ ex:q 1 ] ."] if n == 3 else []))
    with ParquetStreamWriter(tmp_path / "s.parquet") as writer:
        writer.write_all(elements)
    sources = [StreamSource(yabench, "yabench"), StreamSource(str(nquads), "nquads"),
               StreamSource(csrbench_nquads, "nquads"), StreamSource(str(folder), "csrbench-dir", 250),
               StreamSource(str(tmp_path / "s.parquet"), "parquet")]
    shared = conformance_dir()
    if shared is not None:
        sources.append(StreamSource(str(shared / "data"), "csrbench-dir"))
    for source in sources:
        rows, _ = spark_rows(spark, source)
        assert rows == python_rows(source)[0], source
    assert len(elements) == 44


@pytest.mark.spark
def test_with_the_query_s_predicates_only_their_elements_are_kept_at_their_positions(
        spark: Any, tmp_path: Path, small_ranges: None) -> None:
    """The joins read only the query's predicates (as the columnar path keeps only those): the
    frame holds those elements at their positions among all, and the parsing tasks count every
    element's time (the timeline, without a pass over the frame). A stream out of time order is
    ranked whole (``warn``): every element stays."""
    from collections import Counter

    from rsp_workbench.pipeline.spark import job_group
    from rsp_workbench.pipeline.stream_sources import release, spark_stream
    from rsp_workbench.streams.writers import format_nquads_line

    wanted = frozenset({f"<{EX}p1>", f"<{EX}v>"})
    yabench = write(tmp_path / "s.stream", ODD_YABENCH + yabench_lines(60, start=100))
    elements = list(read_stream(yabench, "yabench"))
    nquads = write(tmp_path / "s.nq", [format_nquads_line(e).rstrip("\n") for e in elements])
    disordered = write(tmp_path / "late.stream", yabench_lines(40, start=5) + yabench_lines(20))
    for source in (StreamSource(yabench, "yabench"), StreamSource(nquads, "nquads"),
                   StreamSource(disordered, "yabench", on_disorder="warn")):
        everything = python_rows(source)[0]
        with job_group(spark, "test-predicates", "predicates"):
            stream = spark_stream(spark, source, wanted)
            try:
                rows = [tuple(row) for row in stream.frame.orderBy("pos").collect()]
                groups = row_groups(stream.scratch)
            finally:
                release(stream)
        assert stream.time_counts is not None
        assert dict(zip(*stream.time_counts)) == Counter(row[3] for row in everything), source
        if source.on_disorder == "warn":
            assert [row[:4] for row in rows] == everything
            continue
        expected = [(*row, pos) for pos, row in enumerate(everything) if row[1] in wanted]
        assert rows == expected and 0 < len(rows) < len(everything), source
        # a row group per predicate in each part, positions ascending in it: a pattern's scan skips the others
        assert {predicate for part in groups for predicate, _ in part} == wanted
        assert any(len(part) == 2 for part in groups)  # a range with both predicates: two row groups
        for part in groups:
            assert [predicate for predicate, _ in part] == sorted(wanted & {predicate for predicate, _ in part})
            assert all(positions == sorted(positions) for _, positions in part)


def row_groups(scratch: str | None) -> list[list[tuple[str, list[int]]]]:
    """Per part file in ``scratch`` (file order), per row group its predicates (space-separated) and positions."""
    import pyarrow.parquet as pq

    found = []
    for part in sorted(Path(scratch or "").glob("part-*.parquet")):
        with pq.ParquetFile(part) as parquet:
            groups = []
            for group in range(parquet.metadata.num_row_groups):
                table = parquet.read_row_group(group, columns=["p", "pos"])
                groups.append((" ".join(sorted(set(table.column("p").to_pylist()))), table.column("pos").to_pylist()))
            found.append(groups)
    return found


@pytest.mark.spark
def test_a_bad_line_deep_in_a_file_is_reported_with_its_file_and_line(spark: Any, tmp_path: Path,
                                                                      small_ranges: None) -> None:
    lines = yabench_lines(300)
    lines[236] = f'<{EX}s> <{EX}p> "no time" .'  # line 237, in the ~30th range
    source = StreamSource(write(tmp_path / "bad.stream", lines), "yabench")
    with pytest.raises(UserError) as raised:
        spark_rows(spark, source)
    assert str(raised.value) == python_error(source)
    assert "bad.stream:237:" in str(raised.value)


@pytest.mark.spark
def test_of_several_errors_in_different_ranges_the_first_in_the_file_is_reported(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every range is parsed on its own at once (one pass); the driver then names the first error
    in the file, as the Python reader stops there: a step back at a range's start before a
    malformed line of a later range, and a malformed line before a later step back."""
    from rsp_workbench.pipeline import stream_sources

    good = yabench_lines(40, start=100)  # times 100..107
    monkeypatch.setattr(stream_sources, "RANGE_BYTES", sum(len(line) + 1 for line in good))  # a range each
    later = yabench_lines(40, start=200)
    malformed = [*later[:10], f'<{EX}s> <{EX}p> "no time" .', *later[11:]]  # its line 11
    cases = {  # ranges in file order → the line the Python reader names
        "back-then-bad": ([*good, *yabench_lines(40, start=50), *malformed], 41),
        "bad-then-back": ([*good, *malformed, *yabench_lines(40, start=50)], 51),
    }
    for name, (lines, line) in cases.items():
        source = StreamSource(write(tmp_path / f"{name}.stream", lines), "yabench")
        with pytest.raises(UserError) as raised:
            spark_rows(spark, source)
        assert str(raised.value) == python_error(source), name
        assert str(raised.value).startswith(f"{source.path}:{line}:"), name


@pytest.mark.spark
def test_time_going_backwards_is_reported_at_its_line_also_across_ranges(spark: Any, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A range checks its first element against the last one of the range before (from the first pass)."""
    from rsp_workbench.pipeline import stream_sources

    lines = yabench_lines(60, start=100) + yabench_lines(60, start=50)  # line 61 goes back
    monkeypatch.setattr(stream_sources, "RANGE_BYTES", sum(len(line) + 1 for line in lines[:60]))  # ...at a range's start
    source = StreamSource(write(tmp_path / "back.stream", lines), "yabench")
    with pytest.raises(UserError) as raised:
        spark_rows(spark, source)
    assert str(raised.value) == python_error(source) == f"{source.path}:61: time goes backwards: 50 after 111"
    warned = StreamSource(source.path, "yabench", on_disorder="warn")
    rows, report = spark_rows(spark, warned)
    expected, python_report = python_rows(warned)
    assert rows == expected
    assert report.summary() == python_report.summary()


@pytest.mark.spark
def test_a_stream_in_disorder_is_put_in_time_order_across_partitions(spark: Any, tmp_path: Path,
                                                                    small_ranges: None) -> None:
    """``warn``: the elements sorted by time, ties in file order (as the Python reader's stable sort),
    positions 0, 1, 2, … — computed over several partitions (a global sort, then each partition's
    offset from the counts before it), not gathered into one."""
    lines = [line for block in range(6) for line in yabench_lines(40, start=[30, 0, 50, 10, 40, 20][block])]
    source = StreamSource(write(tmp_path / "shuffled.stream", lines), "yabench", on_disorder="warn")
    from rsp_workbench.pipeline.stream_sources import release, spark_stream

    spark.conf.set("spark.sql.shuffle.partitions", "4")
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")  # keep them four
    try:
        rows, report = spark_rows(spark, source)
        stream = spark_stream(spark, source)
        try:
            assert stream.frame.rdd.getNumPartitions() == 4
        finally:
            release(stream)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", "1")
        spark.conf.unset("spark.sql.adaptive.coalescePartitions.enabled")
    expected, python_report = python_rows(source)
    assert rows == expected and len(rows) == 240
    assert report.summary() == python_report.summary()
    # the same elements as Parquet in row groups of 50: steps back inside row groups and between them,
    # counted by the row groups' tasks, the first one named by its row
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rsp_workbench.streams.parquet import SCHEMA

    columns = list(zip(*(tuple(element)[:3] + (None, element.t)
                         for element in read_stream(source.path, "yabench", on_disorder="warn"))))
    table = pa.Table.from_arrays([pa.array(column, type=field.type) for column, field in zip(columns, SCHEMA)],
                                 schema=SCHEMA)
    pq.write_table(table, tmp_path / "shuffled.parquet", row_group_size=50)  # the workbench's writer refuses disorder
    parquet = StreamSource(str(tmp_path / "shuffled.parquet"), "parquet", on_disorder="warn")
    rows, report = spark_rows(spark, parquet)
    expected, python_report = python_rows(parquet)
    assert rows == expected and len(rows) == 240
    assert report.disorders == python_report.disorders == 3
    assert report.summary() == python_report.summary()


def gzipped(path: Path, lines: list[str]) -> str:
    import gzip

    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.spark
def test_a_gz_stream_is_unpacked_once_then_parsed_in_ranges(spark: Any, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """gzip is read from its start: one task unpacks it; its ranges are then parsed in parallel, with
    the Python readers' rows, and a bad line is named in the ``.gz`` file at its line."""
    from rsp_workbench.pipeline import stream_sources
    from rsp_workbench.pipeline.spark import job_group
    from rsp_workbench.pipeline.stream_sources import release, spark_stream
    from rsp_workbench.streams.writers import format_nquads_line

    monkeypatch.setattr(stream_sources, "RANGE_BYTES", 1024)  # the smaller file (12.5 kB): 13 ranges
    yabench = gzipped(tmp_path / "s.stream.gz", ODD_YABENCH + yabench_lines(200, start=100))
    elements = list(read_stream(yabench, "yabench"))
    nquads = gzipped(tmp_path / "s.nq.gz", [format_nquads_line(e).rstrip("\n") for e in elements])
    for source in (StreamSource(yabench, "yabench"), StreamSource(nquads, "nquads")):
        rows, _ = spark_rows(spark, source)
        assert rows == python_rows(source)[0] and len(rows) == 244, source
        with job_group(spark, "test-gz", "gz partitions"):
            stream = spark_stream(spark, source)
            try:
                assert stream.scratch is not None
                names = os.listdir(stream.scratch)
                assert len([n for n in names if n.startswith("part-")]) > 10  # a task per 1 kB range
                assert not any(name.startswith(".unpacked") for name in names)  # removed once parsed
            finally:
                release(stream)
    lines = yabench_lines(300)
    lines[236] = f'<{EX}s> <{EX}p> "no time" .'
    bad = StreamSource(gzipped(tmp_path / "bad.stream.gz", lines), "yabench")
    with pytest.raises(UserError) as raised:
        spark_rows(spark, bad)
    assert str(raised.value) == python_error(bad)
    assert "bad.stream.gz:237:" in str(raised.value)
    truncated = tmp_path / "cut.stream.gz"
    truncated.write_bytes(Path(yabench).read_bytes()[:-200])
    cut = StreamSource(str(truncated), "yabench")
    with pytest.raises(UserError) as raised:
        spark_rows(spark, cut)
    assert str(raised.value) == python_error(cut)


def csrbench_nquads_lines(graphs: int = 40) -> list[str]:
    """The CSRBench oracle layout with all it allows: graphs out of time order, interleaved, split
    over ranges, ties in time, stamps in a metadata graph (at the file's start and end: far from their
    graphs), in the default graph and inside their own graph, default-graph statements and a data
    statement that uses a hasTimestamp predicate."""
    times = {k: (k * 7919) % 23 * 10 for k in range(graphs)}  # out of order, with ties
    stamp = f"<{EX}hasTimestamp>"
    lines = [f'<{EX}g{k}> {stamp} "{times[k]}" <{EX}meta> .' for k in range(0, graphs, 5)]
    lines.append(f"<{EX}x> <{EX}p> <{EX}y> .")  # default graph: skipped
    for k in range(graphs):
        if k % 5 == 1:
            lines.append(f'<{EX}g{k}> {stamp} "{times[k]}" .')
        elif k % 5 == 2:
            lines.append(f'<{EX}g{k}> {stamp} "{times[k]}" <{EX}g{k}> .')
        for j in range(6):
            lines.append(f'<{EX}s{k}-{j}> <{EX}p> "v{j}" <{EX}g{k}> .')
            if k % 4 == 3 and j % 2:  # interleaved with the graph before
                lines.append(f"<{EX}t{k}-{j}> <{EX}q> <{EX}o{j}> <{EX}g{k - 1}> .")
        if k == 20:
            lines.append(f'<{EX}obs> {stamp} "5" <{EX}g{k}> .')  # a data statement: obs is no graph
            lines.append(f"<{EX}x> <{EX}p> <{EX}z> .")
    lines.append(f"<{EX}meta> <{EX}about> \"stamps\" <{EX}meta> .")
    lines += [f'<{EX}g{k}> {stamp} "{times[k]}" <{EX}meta> .' for k in range(graphs) if k % 5 in (3, 4)]
    return lines


@pytest.mark.spark
def test_the_csrbench_nquads_layout_is_read_in_ranges(spark: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Pass 1 per range (graphs' lines and stamps), merged by the driver; pass 2 per range; positions
    from a global sort on (time, graph's first line, line): the Python reader's rows and report."""
    from rsp_workbench.pipeline import stream_sources
    from rsp_workbench.pipeline.spark import job_group

    monkeypatch.setattr(stream_sources, "RANGE_BYTES", 1536)  # 21.5 kB: 15 ranges, a task each
    from rsp_workbench.pipeline.stream_sources import release, spark_stream

    lines = csrbench_nquads_lines()
    source = StreamSource(write(tmp_path / "oracle.nq", lines), "nquads")
    rows, report = spark_rows(spark, source)
    expected, python_report = python_rows(source)
    assert rows == expected and len(rows) == 40 * 6 + 10 * 3 + 1  # the data statement with a stamp is an element
    assert len({row[3] for row in rows}) < 40  # ties in time
    assert (report.elements, report.skipped, report.summary()) == (
        python_report.elements, python_report.skipped, python_report.summary())
    assert report.skipped == 3  # two default-graph statements, the metadata graph's own statement
    with job_group(spark, "test-csrbench-nquads", "csrbench nquads partitions"):
        stream = spark_stream(spark, source)
        try:
            assert stream.scratch is not None
            assert len([name for name in os.listdir(stream.scratch) if name.startswith("part-")]) > 10
        finally:
            release(stream)
    packed = StreamSource(gzipped(tmp_path / "oracle.nq.gz", lines), "nquads")
    assert spark_rows(spark, packed)[0] == expected


@pytest.mark.spark
def test_the_csrbench_nquads_layout_s_errors_are_the_python_readers(spark: Any, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Each as the Python reader words it, at its line; of two malformed lines in different ranges,
    the first one in the file (the tasks of pass 1 return their errors, the driver picks)."""
    from rsp_workbench.pipeline import stream_sources

    monkeypatch.setattr(stream_sources, "RANGE_BYTES", 2048)  # ~30 lines: about ten ranges per file
    stamp = f"<{EX}hasTimestamp>"
    lines = csrbench_nquads_lines()
    two = lines + [f'<{EX}g7> {stamp} "999" .', f'<{EX}g3> {stamp} "998" .']  # later ones
    two.insert(len(lines) // 2, f'<{EX}g30> {stamp} "997" <{EX}meta> .')  # the first one in the file
    untimed = lines[:]
    untimed.insert(len(lines) * 2 // 3, f"<{EX}a> <{EX}p> <{EX}b> <{EX}untimed> .")
    malformed = lines[:]
    malformed[len(lines) // 2] = f"<{EX}a> <{EX}p> <b> <{EX}g1> ."  # a relative IRI, in a range of its own
    malformed[len(lines) - 10] = f"<{EX}a> <{EX}p> . <{EX}g1> ."  # later: the first one is named
    bad_time = lines[:]
    bad_time[len(lines) - 5] = f'<{EX}g3> {stamp} "soon" <{EX}meta> .'
    cases = {"two": (two, ":158: graph <http://ex.org/g30> has two timestamps: 30 and 997"),
             "untimed": (untimed, ":210: graph <http://ex.org/untimed> has no timestamp"),
             "malformed": (malformed, f":{len(lines) // 2 + 1}:37: relative IRI"),
             "bad_time": (bad_time, ":310: expected an integer time"),
             "none": ([f"<{EX}a> <{EX}p> <{EX}b> <{EX}g> ."] * 60, "no timestamped graphs")}
    for name, (case, words) in cases.items():
        source = StreamSource(write(tmp_path / f"{name}.nq", case), "nquads")
        with pytest.raises(UserError) as raised:
            spark_rows(spark, source)
        assert str(raised.value) == python_error(source), name
        assert words in str(raised.value), name


def _read_range_dying_once(marker: str, *args: Any, **kwargs: Any) -> Any:
    """`read_range` as a task runs it, but the first task to get here kills its own Python
    worker (SIGKILL, as the kernel's out-of-memory killer would) once it has written part of
    its part file: a worker lost mid-job, mid-write."""
    import signal

    from rsp_workbench.pipeline import stream_sources

    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return stream_sources.read_range(*args, **kwargs)
    scratch, index = args[2], args[3][0]
    Path(scratch, f".part-{index:06d}.{os.getpid()}.partial").write_bytes(b"PAR1")  # half written
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.spark
def test_a_python_worker_lost_mid_job_is_retried_and_the_answers_are_the_same(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session retries a failed task once (`with_task_retries`): the oracle's answers over a
    stream whose reading lost a worker are those of a run that lost none."""
    import sys
    from functools import partial

    from pyspark import cloudpickle

    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.oracle.annotated import fast_expected_answers
    from rsp_workbench.pipeline import stream_sources
    from rsp_workbench.pipeline.oracle_job import clear_annotation_cache, expected_answers
    from rsp_workbench.query.parser import parse_query

    lines = [f'<{EX}o{i}> <{EX}v> "{i % 11}"^^<http://www.w3.org/2001/XMLSchema#integer> "{i * 100}" .'
             for i in range(120)]
    source = StreamSource(write(tmp_path / "s.stream", lines), "yabench")
    query = parse_query(f"REGISTER QUERY q AS SELECT ?o ?v FROM STREAM <{EX}s> [RANGE 1s STEP 500ms] "
                        f"WHERE {{ ?o <{EX}v> ?v FILTER(?v > 4) }}", "csparql")

    t0s = [(0,), (200,)]
    elements = list(read_stream(source.path, "yabench"))
    python = fast_expected_answers(query, {f"{EX}s": elements}, PRESETS["csparql"], t0s)
    marker = tmp_path / "killed"
    monkeypatch.setattr(stream_sources, "read_range", partial(_read_range_dying_once, str(marker)))
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the executors cannot import the tests
    try:
        clear_annotation_cache()
        answers = expected_answers(spark, query, source, PRESETS["csparql"], t0s)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    for t0 in t0s:
        assert answers.answer(t0).emissions == python[t0].emissions
    assert marker.exists()  # a worker did die
    assert sum(len(e.bindings) for e in python[(0,)].emissions) > 0
