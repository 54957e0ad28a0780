"""Helpers shared by several test modules of this folder (constants, builders, comparisons)."""

from __future__ import annotations


from rsp_workbench.streams.model import StreamElement


EX = "http://example.org/"


QUERY = f"""PREFIX : <{EX}>
SELECT ?who ?room FROM NAMED STREAM <{EX}s> [NOW - 2 S SLIDE 2 S]
WHERE {{ ?who :detectedAt ?room }}"""


def elements(times: list[int]) -> list[StreamElement]:
    return [StreamElement(f"<{EX}p{i}>", f"<{EX}detectedAt>", f"<{EX}r{i % 3}>", t) for i, t in enumerate(times)]
