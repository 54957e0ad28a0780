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
def test_a_bad_line_deep_in_a_file_is_reported_with_its_file_and_line(spark: Any, tmp_path: Path,
                                                                      small_ranges: None) -> None:
    lines = yabench_lines(300)
    lines[236] = f'<{EX}s> <{EX}p> "no time" .'  # line 237, in the ~30th range
    source = StreamSource(write(tmp_path / "bad.stream", lines), "yabench")
    with pytest.raises(UserError) as raised:
        spark_rows(spark, source)
    assert str(raised.value) == python_error(source)
    assert f"bad.stream:237:" in str(raised.value)


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
def test_a_gz_stream_is_unpacked_once_then_parsed_in_ranges(spark: Any, tmp_path: Path, small_ranges: None) -> None:
    """gzip is read from its start: one task unpacks it; its ranges are then parsed in parallel, with
    the Python readers' rows, and a bad line is named in the ``.gz`` file at its line."""
    from rsp_workbench.pipeline.spark import job_group
    from rsp_workbench.pipeline.stream_sources import release, spark_stream
    from rsp_workbench.streams.writers import format_nquads_line

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
                assert len([n for n in names if n.startswith("part-")]) > 10  # a task per 512-byte range
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
