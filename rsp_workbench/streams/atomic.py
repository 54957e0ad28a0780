"""The atomic-write contract every stream writer shares (text formats and Parquet).

Its own module so that the text writers (``writers``) and the Parquet writer
(``parquet``) both build on it without importing each other.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Iterable

from rsp_workbench.errors import UserError, file_error
from rsp_workbench.streams.model import StreamElement


class AtomicStreamWriter:
    """Base of the stream writers: time-order check, ``PATH.partial`` renamed on ``close()``.

    Use as a context manager; leaving the block with an exception removes the partial
    file, so an interrupted write never leaves a file that looks complete. Subclasses
    store one element in ``_append`` and release their handle in ``_release`` (returning
    whether one was open).
    """

    format: str

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._partial = self.path.with_name(self.path.name + ".partial")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._last_t: int | None = None
        self.count = 0

    def _append(self, element: StreamElement) -> None:
        raise NotImplementedError

    def _release(self, *, finish: bool) -> bool:
        raise NotImplementedError

    def write(self, element: StreamElement) -> None:
        if self._last_t is not None and element.t < self._last_t:
            raise UserError(
                f"element {self.count + 1} goes back in time ({element.t} < {self._last_t})", file=str(self.path)
            )
        self._last_t = element.t
        try:
            self._append(element)
        except OSError as error:  # a full disk, pyarrow's own errors: name the file
            raise file_error(error, self.path) from None
        self.count += 1

    def write_all(self, elements: Iterable[StreamElement]) -> int:
        for element in elements:
            self.write(element)
        return self.count

    def close(self) -> None:
        """Finish the file and rename the partial file to its final name."""
        try:
            if self._release(finish=True):
                os.replace(self._partial, self.path)
        except OSError as error:  # e.g. the last row group does not fit on the disk
            self._partial.unlink(missing_ok=True)
            raise file_error(error, self.path) from None

    def abort(self) -> None:
        """Discard the partial file (used on error or cancellation)."""
        try:
            self._release(finish=False)
        except OSError:
            pass  # flushing a buffer into a full disk fails again; the file goes anyway
        finally:
            self._partial.unlink(missing_ok=True)

    def __enter__(self) -> "AtomicStreamWriter":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
