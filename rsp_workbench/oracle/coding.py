"""Joined rows as term codes: a BGP's relation without a Python string per row (`CodedRelation`).

Both the columnar path (`rsp_workbench.oracle.columnar.ArrowBGP`) and the Spark job
(`rsp_workbench.pipeline.oracle_job.SparkBGP`) end their BGPs here. The Spark job's driver reads
the executors' joined rows one column at a time and never holds a column of terms whole: each is
written to a file a batch at a time and coded from that file memory-mapped (`spilled`), the codes
found by the executors' 64-bit hashes and checked against the terms (`_codes_by_hash`).
"""

from __future__ import annotations

import os
from functools import partial
from typing import Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rsp_workbench.oracle.annotated import CodedRelation, coded_relation


def arrow_relation(variables: Sequence[str], column: Callable[[str], "pa.ChunkedArray"], terms: Sequence[str],
                   requirement_columns: Sequence[str], hashes: Sequence[str] | None = None,
                   spill: str | None = None, order: np.ndarray | None = None,
                   batches: Callable[[str], Iterable["pa.Array"]] | None = None) -> CodedRelation:
    """Joined rows (``column(name)`` reads one column of them: ``terms``, each variable's terms;
    a requirement per row in ``requirement_columns``; with ``hashes``, each variable's 64-bit
    term hashes) as a BGP's relation whose terms are codes (`CodedRelation`): no Python string
    per row. One column is read at a time, so a caller reading them from files never holds
    all the rows at once; with ``spill`` (a folder), each variable's terms are written there a
    batch at a time (``batches(name)`` reads them so; by default the chunks of ``column(name)``)
    and coded from that file memory-mapped (`spilled`), and its distinct terms are kept so: the
    driver never holds a column of terms (at 50x YABench BIG, reading one whole took 1 GB). With
    ``order`` (a permutation), the relation's rows are the rows read in that order (their codes
    and requirements are permuted; the terms are not copied)."""
    pa.default_memory_pool().release_unused()  # what the caller read for ``order``: back to the system
    requirements = np.empty((0, len(requirement_columns)), np.int64)
    for j, name in enumerate(requirement_columns):  # a column at a time, each moved into place once
        values = column(name).to_numpy()
        if j == 0:
            requirements = np.empty((len(values), len(requirement_columns)), np.int64)
        requirements[:, j] = values if order is None else values[order]
        del values
    codes, dictionaries = [], []
    for v, name in enumerate(terms):
        let_pages_go: Callable[[], None] = lambda: None
        if spill is not None:
            term_column, let_pages_go = spilled((batches or (lambda name: column(name).chunks))(name), spill)
            pa.default_memory_pool().release_unused()  # the batches read and written
        else:
            term_column = column(name)
        coded = _codes_by_hash(column(hashes[v]).to_numpy(), term_column, let_pages_go) if hashes is not None else None
        code, dictionary = coded if coded is not None else _dictionary_codes(term_column)
        if spill is not None and dictionary is not term_column:  # some terms repeat: the distinct ones mapped too
            dictionary = mapped(dictionary, spill)
        let_pages_go()  # the pages the check of the terms read
        del term_column, coded  # only ``dictionary`` holds the terms now
        pa.default_memory_pool().release_unused()  # the hashes and the terms the check read: back to the system
        if order is not None:
            code = code[order]
        codes.append(code.astype(np.int32) if len(code) < 2**31 else code)  # codes are below the rows' count
        dictionaries.append(dictionary)
    stacked = np.stack(codes) if codes else np.zeros((0, len(requirements)), np.int32)
    relation = coded_relation(variables, stacked, dictionaries, requirements)
    pa.default_memory_pool().release_unused()  # the columns read and let go: back to the system
    return relation


def mapped(array: "pa.Array | pa.ChunkedArray", folder: str) -> "pa.ChunkedArray":
    """``array`` written to an Arrow file in ``folder`` and read back memory-mapped (`spilled`)."""
    return spilled(array.chunks if isinstance(array, pa.ChunkedArray) else [array], folder, array.type)[0]


def spilled(arrays: Iterable["pa.Array"], folder: str, kind: "pa.DataType" = pa.string()
            ) -> tuple["pa.ChunkedArray", Callable[[], None]]:
    """``arrays`` (strings of type ``kind``, or one type of their own) written one after the
    other to an Arrow file in ``folder`` and read back memory-mapped, the file unlinked at once
    (the mapping keeps its bytes until the array is let go; nothing is left behind, however the
    process ends). The terms are then the page cache's, read from disk when an answer decodes
    them, not the driver's memory: at 50x YABench BIG the distinct terms of two variables
    unique per row were 1 GB. Only one of ``arrays`` is in memory at a time.

    Also returned: a function that lets the pages read so far go from this process (they are
    read again, from the page cache, when asked): a mapped page that was read counts in the
    process's memory, and checking the terms of 7.5 M joined rows reads every page."""
    import mmap
    import uuid

    import pyarrow.ipc as ipc

    path = os.path.join(folder, f".terms-{uuid.uuid4().hex}.arrow")
    try:
        with pa.OSFile(path, "wb") as sink:
            writer = None
            for array in arrays:
                writer = writer or ipc.new_file(sink, pa.schema([("terms", array.type)]))
                writer.write_batch(pa.record_batch([array], names=["terms"]))
            with writer or ipc.new_file(sink, pa.schema([("terms", kind)])):
                pass  # closed: the file's footer
        with open(path, "rb") as handle:
            pages = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        terms = ipc.open_file(pa.BufferReader(pa.py_buffer(pages))).read_all().column("terms")
        dont_need = getattr(mmap, "MADV_DONTNEED", None)  # not on every system: the pages then stay
        return terms, (partial(pages.madvise, dont_need) if dont_need is not None else lambda: None)
    finally:
        if os.path.exists(path):
            os.remove(path)


def _dictionary_codes(terms: "pa.ChunkedArray") -> tuple[np.ndarray, "pa.Array"]:
    """Codes into the distinct terms, by Arrow's dictionary encoding (-1 for a null)."""
    if terms.nbytes >= 1 << 30:  # past 32-bit string offsets once the chunks are one array
        terms = terms.cast(pa.large_string())
    encoded = pc.dictionary_encode(terms.combine_chunks())
    return encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary


def _codes_by_hash(hashes: np.ndarray, terms: "pa.ChunkedArray", read: Callable[[], None] = lambda: None
                   ) -> tuple[np.ndarray, "pa.ChunkedArray"] | None:
    """Codes into the distinct terms, found by the terms' 64-bit hashes and then checked: a row
    whose hash it shares with an earlier row must have that row's term (None if one does not:
    a collision; the caller then encodes the terms themselves). No hash table of the terms is
    built, which at 10x YABench BIG took more memory than the terms. ``read()`` is called after
    each slice of terms checked (memory-mapped terms: their pages let go, `spilled`)."""
    n = len(hashes)
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    del hashes  # the caller's read of the column: this is its only reference
    new_hash = np.empty(n, bool)  # in hash order: the first row of its hash
    new_hash[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new_hash[1:])
    del ordered  # each array let go once read: 7.5 M rows (50x YABench BIG) are 60 MB an array
    null = terms.is_null().to_numpy(zero_copy_only=False) if terms.null_count else None
    if new_hash.all():  # every hash once, so every term: the column is its own dictionary
        codes = np.arange(n, dtype=np.int64)
        if null is not None:
            codes[null] = -1
        return codes, terms
    start = np.where(new_hash, np.arange(n), 0)  # in hash order: where its hash's rows start
    np.maximum.accumulate(start, out=start)
    first = np.empty(n, np.int64)
    first[order] = order[start]  # the earliest row of each hash (a stable sort)
    del order, start, new_hash
    own = first == np.arange(n)  # the first row of its hash
    later = np.flatnonzero(~own)
    for at in range(0, len(later), 1 << 16):  # a slice at a time: two copies of every repeated term would not fit
        rows = later[at:at + (1 << 16)]
        same = pc.equal(take_rows(terms, rows), take_rows(terms, first[rows]))
        read()
        if same.null_count or not pc.all(same).as_py():  # a collision (or a null beside a term)
            return None
    code_of_row = np.cumsum(own) - 1  # first rows numbered in row order (no sort)
    codes = code_of_row[first]
    del code_of_row
    dictionary = take_rows(terms, np.flatnonzero(own))  # one row per distinct term, in row order
    if null is not None:
        codes[null] = -1
    return codes, pa.chunked_array([dictionary])


def take_rows(array: "pa.ChunkedArray", rows: np.ndarray) -> "pa.Array":
    """``array``'s values at ``rows``, taken chunk by chunk: `ChunkedArray.take` first joins
    every chunk into one array, a copy of the whole column for each call (a column of terms
    spilled a batch at a time has a chunk per batch)."""
    if len(rows) == 0:
        return pa.array([], array.type)
    starts = np.cumsum([0] + [len(chunk) for chunk in array.chunks[:-1]])
    chunk_of = np.searchsorted(starts, rows, side="right") - 1
    by_chunk = np.argsort(chunk_of, kind="stable")
    counts = np.bincount(chunk_of, minlength=array.num_chunks)
    pieces, at = [], 0
    for k, count in enumerate(counts.tolist()):
        if count:
            pieces.append(array.chunk(k).take(pa.array(rows[by_chunk[at:at + count]] - starts[k])))
            at += count
    back = np.empty(len(rows), np.int64)  # from chunk order back to the order of ``rows``
    back[by_chunk] = np.arange(len(rows))
    return pa.concat_arrays(pieces).take(pa.array(back))
