"""Run the workbench's named benchmarks and print a table (optionally JSON).

Usage::

    python3 benchmarks/run.py                      # every benchmark
    python3 benchmarks/run.py stream_read          # names starting with "stream_read"
    python3 benchmarks/run.py stream_read --lines 200000 --repeat 1 --json out.json

A benchmark is a function ``bench(workdir: Path, options) -> Callable[[], int]``: the outer
call prepares inputs (not timed), the returned callable does the timed work and returns
the number of elements it processed. Register it with ``@benchmark("name")``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rsp_workbench.streams.readers import read_stream  # noqa: E402
from rsp_workbench.streams.writers import StreamWriter, write_stream  # noqa: E402

Prepared = Callable[[], int]
Benchmark = Callable[[Path, argparse.Namespace], Prepared]
BENCHMARKS: dict[str, Benchmark] = {}


def benchmark(name: str) -> Callable[[Benchmark], Benchmark]:
    """Register a benchmark under ``name`` (names group by prefix, e.g. ``stream_read_*``)."""

    def register(function: Benchmark) -> Benchmark:
        BENCHMARKS[name] = function
        return function

    return register


@dataclass(frozen=True)
class Result:
    name: str
    elements: int
    seconds: float
    elements_per_second: float
    all_seconds: tuple[float, ...]


# --- inputs -----------------------------------------------------------------------------

_SSW = "http://knoesis.wright.edu/ssw/"
_SG1 = (
    "<{ssw}Observation_AirTemperature_A{id}_{t}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ssw}ont/weather.owl#TemperatureObservation> \"{t}\" .\n"
    "<{ssw}Observation_AirTemperature_A{id}_{t}> <{ssw}ont/sensor-observation.owl#observedProperty> <{ssw}ont/weather.owl#_AirTemperature> \"{t}\" .\n"
    "<{ssw}Observation_AirTemperature_A{id}_{t}> <{ssw}ont/sensor-observation.owl#procedure> <{ssw}System_A{id}> \"{t}\" .\n"
    "<{ssw}Observation_AirTemperature_A{id}_{t}> <{ssw}ont/sensor-observation.owl#result> <{ssw}MeasureData_AirTemperature_A{id}_{t}> \"{t}\" .\n"
    "<{ssw}MeasureData_AirTemperature_A{id}_{t}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ssw}ont/sensor-observation.owl#MeasureData> \"{t}\" .\n"
    "<{ssw}MeasureData_AirTemperature_A{id}_{t}> <{ssw}ont/sensor-observation.owl#floatValue> {v}^^<http://www.w3.org/2001/XMLSchema#float> \"{t}\" .\n"
    "<{ssw}MeasureData_AirTemperature_A{id}_{t}> <{ssw}ont/sensor-observation.owl#uom> <{ssw}ont/weather.owl#fahrenheit> \"{t}\" .\n"
)


def sg1_stream(path: Path, lines: int, stations: int = 50, interval_ms: int = 1000, seed: int = 1) -> int:
    """Write an SG1-shaped YABench stream (docs/design/FORMATS.md 7-line template) of about ``lines`` lines."""
    rng = random.Random(seed)
    steps = max(1, -(-lines // (7 * stations)))
    with StreamWriter(path, "yabench") as writer:
        for step in range(steps):
            t = step * interval_ms
            writer.write_text(
                "".join(
                    _SG1.format(ssw=_SSW, id=station, t=t, v=f"{rng.uniform(50.0, 90.0):.1f}")
                    for station in range(stations)
                )
            )
    return steps * stations * 7


_inputs: dict[str, Path] = {}


def stream_file(workdir: Path, fmt: str, lines: int) -> Path:
    """The benchmark stream in ``fmt``, generated once per process (not timed)."""
    key = f"{fmt}:{lines}"
    if key not in _inputs:
        if fmt == "yabench":
            path = workdir / "sg1.stream"
            sg1_stream(path, lines)
        else:
            path = workdir / ("sg1.parquet" if fmt == "parquet" else "sg1.nq")
            write_stream(path, read_stream(stream_file(workdir, "yabench", lines), "yabench"), fmt)
        _inputs[key] = path
    return _inputs[key]


def _consume(iterator: Iterable[object]) -> int:
    """Drain an iterator at C speed and return how many items it gave."""
    last = collections.deque(enumerate(iterator, 1), maxlen=1)
    return last[0][0] if last else 0


# --- benchmarks --------------------------------------------------------------------------


def _stream_read(fmt: str) -> Benchmark:
    def prepare(workdir: Path, options: argparse.Namespace) -> Prepared:
        path = stream_file(workdir, fmt, options.lines)
        return lambda: _consume(read_stream(path, fmt))

    return prepare


benchmark("stream_read_yabench")(_stream_read("yabench"))
benchmark("stream_read_nquads")(_stream_read("nquads"))
benchmark("stream_read_parquet")(_stream_read("parquet"))


# --- harness -----------------------------------------------------------------------------


def run(names: list[str], options: argparse.Namespace) -> list[Result]:
    results = []
    with tempfile.TemporaryDirectory(prefix="rspwb-bench-") as directory:
        workdir = Path(directory)
        for name in names:
            timed = BENCHMARKS[name](workdir, options)
            seconds = []
            elements = 0
            for _ in range(options.repeat):
                start = time.perf_counter()
                elements = timed()
                seconds.append(time.perf_counter() - start)
            best = min(seconds)
            result = Result(name, elements, best, elements / best if best else 0.0, tuple(seconds))
            results.append(result)
            print_row(result)
        _inputs.clear()
    return results


def print_row(result: Result | None) -> None:
    if result is None:
        print(f"{'benchmark':<24} {'elements':>10} {'seconds':>9} {'elements/s':>12}")
        return
    print(f"{result.name:<24} {result.elements:>10} {result.seconds:>9.3f} {result.elements_per_second:>12,.0f}", flush=True)


def discover() -> None:
    """Let every ``benchmarks/bench_*.py`` module register its benchmarks (``register(benchmark)``)."""
    import importlib

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    for path in sorted(here.glob("bench_*.py")):
        module = importlib.import_module(path.stem)
        if hasattr(module, "register"):
            module.register(benchmark)


def main(argv: list[str] | None = None) -> int:
    discover()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="benchmark names or name prefixes (default: all)")
    parser.add_argument("--lines", type=int, default=1_000_000, help="stream size in lines (default 1000000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per benchmark; the best is reported")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--list", action="store_true", help="list the benchmark names and exit")
    options = parser.parse_args(argv)
    if options.list:
        print("\n".join(BENCHMARKS))
        return 0
    selected = [name for name in BENCHMARKS if not options.names or any(name.startswith(p) for p in options.names)]
    if not selected:
        print(f"no benchmark matches {' '.join(options.names)}; known: {', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    print_row(None)
    results = run(selected, options)
    if options.json:
        document = {
            "lines": options.lines,
            "repeat": options.repeat,
            "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
            "results": [asdict(result) for result in results],
        }
        Path(options.json).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
