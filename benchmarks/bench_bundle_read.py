"""Benchmark: reading a BIG run's result bundle.

Each reader runs in its own child process (``os.wait4`` gives that child's own peak RSS),
once per source tree given with ``--code`` (e.g. the checkout before the change and the one
after it), so the ratios come from one run on one machine:

- ``report``: ``rspwb report BUNDLE`` as written (``summary.json`` present);
- ``report-rebuild``: ``rspwb report`` on a copy without ``summary.json`` (the rows are
  rebuilt from the run folders: every ``run.json`` and ``oracle.json`` is read);
- ``report-html``: ``rspwb report BUNDLE --html FILE`` (the self-contained HTML report; its size is printed);
- ``results``: what the Results browser reads when it opens the bundle
  (``open_bundle`` + ``bundle_data``) and then the run group's per-window quality (``read_window_series``);
- ``timeline``: the window timeline's reader of the largest run (``timeline_run``: it
  also reads the stream and the response log, so only part of it is ``oracle.json``);
- ``windows``: the API's ``open_bundle(BUNDLE).windows(RUN)`` of the largest run as an Arrow table
  (``windows.parquet`` where the code reads it, else ``oracle.json``);
- ``pyarrow``: the yardstick for ``windows``: ``pyarrow.parquet.read_table`` of the same columns of the
  run's ``windows.parquet`` and nothing else (measured once, not per code tree);
- ``imports``: the interpreter with ``pyarrow.parquet`` and the workbench's reader imported, nothing
  read: the RSS every reader starts from (measured once).

A reader has no child processes, so its own peak RSS is that of its process tree.

``--make-from SMALL_BUNDLE --windows N --out DIR`` makes a synthetic bundle first: a copy of
SMALL_BUNDLE whose largest run's ``oracle.json`` and ``windows.parquet`` hold N windows, written by
the real writers from the judge's columns (`QualityRows`; ``write_json_atomic`` with ``JsonRows`` and
``write_windows``, as ``rspwb run`` writes them; the last ``--code`` tree writes them).

``python benchmarks/bench_bundle_read.py BUNDLE --code /path/before --code /path/after``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

READERS = {
    "report": "from rsp_workbench.cli.main import main; main(['report', {bundle!r}])",
    "report-rebuild": "from rsp_workbench.cli.main import main; main(['report', {bundle!r}])",
    "report-html": (
        "import os\nfrom rsp_workbench.cli.main import main\n"
        "main(['report', {bundle!r}, '--html', {html!r}])\n"
        "print('html', os.path.getsize({html!r}))\n"
    ),
    "results": (
        "from rsp_workbench.results.reader import open_bundle\n"
        "from rsp_workbench.results.view_data import bundle_data, read_runs, read_window_series, run_groups, "
        "rows_in_group\n"
        "data = bundle_data(open_bundle({bundle!r}, partial=True))\n"
        "for group, _ in run_groups(data.bundle):\n"
        "    series, problems = read_runs(data.bundle, rows_in_group(data.bundle, group), read_window_series)\n"
        "    print(group, [len(s) for s in series], [s.positions()[-1] for s in series], problems)\n"
    ),
    "timeline": (
        "from rsp_workbench.results.reader import open_bundle\n"
        "from rsp_workbench.results.run_timeline import timeline_run\n"
        "run = timeline_run(open_bundle({bundle!r}, partial=True), {run_id!r})\n"
        "print(run.run_id, len(run.diverging), len(run.evaluations))\n"
    ),
    "windows": (
        "from rsp_workbench.results.reader import open_bundle\n"
        "table = open_bundle({bundle!r}).windows({run_id!r})\n"
        "print('table', table.num_rows, table.nbytes)\n"
    ),
}
#: Measured once (the last code tree): the yardstick and the start-up baseline.
ONCE = {
    "pyarrow": (
        "import pyarrow.parquet as pq\n"
        "table = pq.read_table({windows_file!r}, columns={columns!r})\n"
        "print('table', table.num_rows, table.nbytes)\n"
    ),
    "imports": "import pyarrow.parquet\nimport rsp_workbench.results.reader, rsp_workbench.results.tables\n",
}
#: The columns of the windows table (`rsp_workbench.results.tables.WINDOW_COLUMNS`).
WINDOW_COLUMNS = ["start", "end", "precision", "recall", "actual_size", "expected_size", "window_triples", "delay"]


def largest_run(bundle: Path) -> str:
    return max((p.parent for p in (bundle / "runs").glob("*/oracle.json")), key=lambda p: (p / "oracle.json").stat().st_size).name


def make_bundle(small: Path, out: Path, windows: int, code: str) -> None:
    """A copy of ``small`` whose largest run's oracle.json holds ``windows`` windows (the real writer)."""
    shutil.copytree(small, out)
    target = out / "runs" / largest_run(small) / "oracle.json"
    script = (
        "import random, sys\n"
        "from rsp_workbench.results.bundle import read_json\nfrom rsp_workbench.files import JsonRows, write_json_atomic\n"
        "from rsp_workbench.oracle.judge import Judgement\nfrom rsp_workbench.oracle.quality import QualityRows, WindowQuality\n"
        f"payload = read_json({str(target)!r}); payload.pop('windows', None); n = {windows}\n"
        "def rows():\n"
        "    rnd = random.Random(1)\n"
        "    for i in range(n):\n"
        "        s = (i // 350_000) * 5000\n"
        "        yield WindowQuality(s, s + 5000, 1.0, 1.0 if i % 97 else 0.5, i % 40, i % 40, i % 350_000 + 1,\n"
        "                            None if i % 350 == 0 else rnd.randint(0, 3))\n"
        "judgement = Judgement(payload, QualityRows(rows()))\n"
        "try:\n"
        "    from rsp_workbench.results.windows_file import ROW_GROUP_WINDOWS, write_windows\n"
        "except ImportError:  # a tree from before windows.parquet\n"
        "    pass\n"
        "else:\n"
        f"    write_windows({str(target.with_name('windows.parquet'))!r}, judgement.window_batches(ROW_GROUP_WINDOWS))\n"
        "payload['windows'] = JsonRows(judgement.window_rows, n)\n"
        f"write_json_atomic({str(target)!r}, payload)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, env={**os.environ, "PYTHONPATH": code})


def measure(code: str, source: str) -> dict[str, float]:
    """Wall time and the child's own peak RSS of one reader (and the table it printed, if any)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:  # files, not pipes: wait4 reaps the child
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", source], env={**os.environ, "PYTHONPATH": code,
                                                                    "QT_QPA_PLATFORM": "offscreen"},
                                 cwd=code,  # `python -c` imports from its working directory first
                                 stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        error = err.read().decode(errors="replace").strip().splitlines()
        printed = out.read().decode(errors="replace").splitlines()
        table = [line.split() for line in printed if line.startswith("table ")]
        html = [int(line.split()[1]) for line in printed if line.startswith("html ")]
    exit_code = os.waitstatus_to_exitcode(status)
    return {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "exit": exit_code,
            **({"rows": int(table[-1][1]), "table_mb": round(int(table[-1][2]) / 2**20, 1)} if table else {}),
            **({"html_mb": round(html[-1] / 1e6, 2)} if html else {}),
            **({"error": error[-1]} if exit_code not in (0, 1) and error else {})}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path, nargs="?")
    parser.add_argument("--code", action="append", default=[], help="a source tree to measure (repeatable)")
    parser.add_argument("--readers", default=",".join([*READERS, *ONCE]))
    parser.add_argument("--make-from", type=Path)
    parser.add_argument("--windows", type=int, default=2_000_000)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    codes = args.code or [str(Path(__file__).resolve().parent.parent)]
    bundle = args.bundle
    if args.make_from is not None:
        bundle = args.out or Path(tempfile.mkdtemp(prefix="bench-bundle-")) / "bundle"
        make_bundle(args.make_from, bundle, args.windows, codes[-1])
    if bundle is None:
        parser.error("give a BUNDLE or --make-from")
    rebuild = Path(tempfile.mkdtemp(prefix="bench-rebuild-")) / bundle.name
    shutil.copytree(bundle, rebuild, copy_function=os.link)  # hard links: no copy of the big files
    (rebuild / "summary.json").unlink(missing_ok=True)
    run_id = largest_run(bundle)
    print(f"bundle {bundle}: {run_id}/oracle.json {(bundle / 'runs' / run_id / 'oracle.json').stat().st_size / 1e6:,.0f} MB; "
          f"load {os.getloadavg()[0]:.1f}")
    windows_file = bundle / "runs" / run_id / "windows.parquet"
    if windows_file.is_file():
        print(f"{run_id}/windows.parquet {windows_file.stat().st_size / 1e6:,.1f} MB")
    results = []
    for reader in args.readers.split(","):
        target = rebuild if reader == "report-rebuild" else bundle
        once = reader in ONCE
        if once and not windows_file.is_file():
            continue
        for index, code in enumerate(codes[-1:] if once else codes):
            html = rebuild.parent / f"report-{index}.html"
            source = (ONCE if once else READERS)[reader].format(bundle=str(target), run_id=run_id, html=str(html),
                                                                windows_file=str(windows_file), columns=WINDOW_COLUMNS)
            result = {"reader": reader, "code": code, **measure(code, source), "load": round(os.getloadavg()[0], 1)}
            results.append(result)
            print(f"{reader:15} {code:40} {result['wall_s']:7.2f} s ({result['cpu_s']:.2f} s CPU)  {result['peak_rss_mb']:8.1f} MB  "
                  f"exit {result['exit']}  load {result['load']}" + (f"  {result.get('error')}" if result.get("error") else "")
                  + (f"  table {result['table_mb']} MB" if "table_mb" in result else "")
                  + (f"  html {result['html_mb']} MB" if "html_mb" in result else ""), flush=True)
    shutil.rmtree(rebuild.parent)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
