"""`rspwb windows`: print window instances and evaluation instants (a teaching aid).

For scripts and tests (docs/design/CLI.md): ``rspwb windows --size 5 --slide 2 --t0 1 --scope
open-closed --from 0 --to 10 --unit ms --json`` prints the windows that *close* within
[from, to], i.e. RSP-QL Example 7's (1,6], (3,8], (5,10].
"""

from __future__ import annotations

import argparse
from typing import Any

from rsp_workbench.core.report import evaluation_instants
from rsp_workbench.core.semantics import ActiveWindowChoice, BorderConvention, ReportPolicy, Tick, parse_enum
from rsp_workbench.core.time import parse_duration
from rsp_workbench.core.windows import WindowSpec
from rsp_workbench.errors import UserError

UNIT_SUFFIXES = ("ms", "s", "m", "h")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "windows",
        help="print the window instances and evaluation instants of a window spec and policy",
        description="Print the windows of a time-based sliding window that close within [--from, --to], "
        "and, with --report, the instants at which a report policy evaluates over a stream "
        "(--stream FILE or --times 2,2,5,7,12). Numbers are read in --unit unless they carry "
        "their own unit (5s, PT5S).",
    )
    parser.add_argument("--size", required=True, help="window size ω (e.g. 5, 5s, PT5S)")
    parser.add_argument("--slide", help="window slide β (default: the size, a tumbling window)")
    parser.add_argument("--t0", default="0", help="opening time of the first window (default 0)")
    parser.add_argument(
        "--scope", "--border", dest="scope", default="closed-open",
        help="border convention: closed-open (SECRET), open-closed (RSP-QL), closed (YABench)",
    )
    parser.add_argument("--from", dest="start", default=None, help="start of the range (default t0)")
    parser.add_argument("--to", dest="end", default=None, help="end of the range (default: last element, or t0 + 3 slides)")
    parser.add_argument("--unit", default="ms", choices=UNIT_SUFFIXES, help="unit of bare numbers and of the output")
    parser.add_argument("--leading-partial", action="store_true", help="YABench's shorter first windows [max(t0, t0+iβ−ω), t0+iβ]")
    parser.add_argument("--report", help="report policy, e.g. 'window-close & non-empty', 'content-change', 'periodic(5s)'")
    parser.add_argument("--tick", default="tuple", help="tuple | time | batch (default tuple)")
    parser.add_argument("--batch-size", type=int, default=1, help="elements per batch with --tick batch")
    parser.add_argument("--active-window", default="earliest", help="earliest (SECRET) | latest (RSP-QL present window)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--times", help="comma-separated element timestamps, e.g. 2,2,5,7,12")
    source.add_argument("--stream", help="a stream file whose timestamps to use")
    parser.add_argument("--stream-format", default=None, help="yabench | csrbench-dir | nquads | parquet (default: detect)")
    parser.add_argument("--interval", default="1000", help="csrbench-dir: time between data_NN files (default 1000 ms)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _to_unit(ms: int, unit_ms: int) -> int | float:
    return ms // unit_ms if ms % unit_ms == 0 else ms / unit_ms


def _read_times(args: argparse.Namespace, unit: str) -> list[int] | None:
    if args.times:
        try:
            return sorted(parse_duration(part, default_unit=unit, field="--times") for part in args.times.split(",") if part.strip())
        except UserError as error:
            raise error.located(field="--times") from None
    if args.stream:
        from rsp_workbench.streams.readers import detect_format, read_stream

        fmt = args.stream_format or detect_format(args.stream)
        interval = parse_duration(args.interval, field="--interval")
        return [element.t for element in read_stream(args.stream, fmt, interval_ms=interval)]
    return None


def run(args: argparse.Namespace) -> int:
    from rsp_workbench.cli.terminal import print_json

    unit = args.unit
    unit_ms = parse_duration(f"1{unit}")

    def duration(value: str, option: str) -> int:
        return parse_duration(value, default_unit=unit, field=option)

    size = duration(args.size, "--size")
    slide = duration(args.slide, "--slide") if args.slide is not None else size
    t0 = duration(args.t0, "--t0")
    border = parse_enum(BorderConvention, args.scope, "--scope")
    try:
        spec = WindowSpec(size, slide, t0, border, leading_partial=args.leading_partial)
    except UserError as error:
        raise UserError(error.message, field=f"--{error.field}") from None
    times = _read_times(args, unit)
    start = duration(args.start, "--from") if args.start is not None else t0
    if args.end is not None:
        end = duration(args.end, "--to")
    elif times:
        end = times[-1]
    else:
        end = t0 + size + 2 * slide
    if end < start:
        raise UserError(f"--to ({args.end}) is before --from ({args.start})", field="--to")
    windows = spec.closing_within(start, end)
    payload: dict[str, Any] = {
        "scope": border.value,
        "unit": unit,
        "size": _to_unit(size, unit_ms),
        "slide": _to_unit(slide, unit_ms),
        "t0": _to_unit(t0, unit_ms),
        "kind": spec.kind,
        "from": _to_unit(start, unit_ms),
        "to": _to_unit(end, unit_ms),
        "windows": [],
    }
    for window in windows:
        entry: dict[str, Any] = {"open": _to_unit(window.open, unit_ms), "close": _to_unit(window.close, unit_ms)}
        if times is not None:
            lo, hi = window.position_range(times)
            entry["elements"] = hi - lo
        payload["windows"].append(entry)
    if args.report:
        policy = ReportPolicy.parse(args.report, "--report")
        tick = parse_enum(Tick, args.tick, "--tick")
        choice = parse_enum(ActiveWindowChoice, args.active_window, "--active-window")
        evaluations = evaluation_instants(
            times or [], spec, policy, tick=tick, choice=choice, batch_size=args.batch_size, start=start, end=end
        )
        payload["report"] = str(policy)
        payload["tick"] = tick.value
        payload["evaluations"] = [
            {
                "time": _to_unit(e.time, unit_ms),
                "window": {"open": _to_unit(e.window.open, unit_ms), "close": _to_unit(e.window.close, unit_ms)},
                "elements": e.size,
                "sequence": e.sequence,
            }
            for e in evaluations
        ]
    if args.json:
        print_json(payload)
    else:
        _print_table(payload, border)
    return 0


def _print_table(payload: dict[str, Any], border: BorderConvention) -> None:
    left, right = border.brackets()
    unit = payload["unit"]
    print(
        f"{payload['kind']} window: size {payload['size']}{unit}, slide {payload['slide']}{unit}, "
        f"t0 {payload['t0']}{unit}, borders {left}o, c{right} ({payload['scope']})"
    )
    print(f"windows closing in [{payload['from']}, {payload['to']}] ({unit}):")
    has_elements = any("elements" in w for w in payload["windows"])
    print(f"  {'#':>3}  {'window':<24}" + ("  elements" if has_elements else ""))
    for number, window in enumerate(payload["windows"], 1):
        text = f"{left}{window['open']}, {window['close']}{right}"
        print(f"  {number:>3}  {text:<24}" + (f"  {window['elements']:>8}" if has_elements else ""))
    if "evaluations" in payload:
        print(f"evaluations of '{payload['report']}' ({payload['tick']} tick):")
        print(f"  {'time':>8}  {'window':<24}  elements")
        for evaluation in payload["evaluations"]:
            w = evaluation["window"]
            text = f"{left}{w['open']}, {w['close']}{right}"
            print(f"  {evaluation['time']:>8}  {text:<24}  {evaluation['elements']:>8}")
        if not payload["evaluations"]:
            print("  (none)")
