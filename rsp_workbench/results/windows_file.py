"""A judged run's per-window quality as Parquet: ``runs/RUN_ID/windows.parquet`` (docs/result-bundle.md;
the name is `rsp_workbench.results.bundle.WINDOWS_FILE`).

``oracle.json`` holds the same numbers as JSON text, and a content-change run over YABench BIG
judges 2.1 M windows (564 MB of text): decoding them takes seconds however it is done, while
pyarrow reads the columns of a Parquet file at memory speed. So the pipeline writes both — the
JSON for people and older readers, the Parquet file for the tables and views — and the readers
take the Parquet file when it is there (`rsp_workbench.results.tables.windows_table`).

The writer takes the windows a batch of columns at a time (one row group each), so neither the
file nor a list of the run's windows is ever built whole in memory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from rsp_workbench.errors import UserError
from rsp_workbench.files import PARTIAL

#: The file's columns: the windows table's (`rsp_workbench.results.tables.WINDOW_COLUMNS`, in its
#: types: ``delay`` float64, null where the engine did not report the window) and the borders
#: gracious mode reconstructed (null where it did not move them), which the window timeline draws.
SCHEMA = pa.schema([
    ("start", pa.int64()), ("end", pa.int64()), ("precision", pa.float64()), ("recall", pa.float64()),
    ("actual_size", pa.int64()), ("expected_size", pa.int64()), ("window_triples", pa.int64()),
    ("delay", pa.float64()), ("reconstructed_start", pa.int64()), ("reconstructed_end", pa.int64()),
])

#: Windows per row group (and per batch the judge hands over): ~10 MB of columns.
ROW_GROUP_WINDOWS = 131_072


def write_windows(path: str | os.PathLike[str], batches: Iterable[Mapping[str, Any]]) -> int:
    """Write ``batches`` (column name → numpy array, a masked array where values may be missing) as
    ``path`` via ``path.partial`` + rename, one row group per batch; returns the number of windows."""
    import pyarrow.parquet as pq

    target = Path(path)
    partial = target.with_name(target.name + PARTIAL)
    count = 0
    try:
        with pq.ParquetWriter(partial, SCHEMA) as writer:
            for batch in batches:
                columns = [_array(batch[field.name], field.type) for field in SCHEMA]
                writer.write_batch(pa.record_batch(columns, schema=SCHEMA), row_group_size=len(columns[0]) or None)
                count += len(columns[0])
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    return count


def _array(values: Any, kind: pa.DataType) -> pa.Array:
    if isinstance(values, np.ma.MaskedArray):
        data = np.ma.getdata(values).astype(kind.to_pandas_dtype(), copy=False)
        return pa.array(data, type=kind, mask=np.ma.getmaskarray(values))
    return pa.array(np.asarray(values).astype(kind.to_pandas_dtype(), copy=False), type=kind)


def read_windows(path: Path, columns: Sequence[str]) -> pa.Table:
    """``columns`` of a ``windows.parquet``, in the file's types; a file that is not one (truncated,
    damaged, another schema) is one `UserError` naming it."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path, columns=list(columns))
    except (OSError, pa.ArrowException) as error:
        reason = _first_line(error).replace(f" '{path}'", "")  # the file is named once, in front
        raise UserError(f"not a readable Parquet file of windows ({reason}); delete it to read the windows "
                        f"from oracle.json", file=str(path)) from None
    for name in columns:
        if table.schema.field(name).type != SCHEMA.field(name).type:
            raise UserError(f"column {name!r} is {table.schema.field(name).type}, expected {SCHEMA.field(name).type}",
                            file=str(path), field=name)
    return table


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


__all__ = ["ROW_GROUP_WINDOWS", "SCHEMA", "read_windows", "write_windows"]
