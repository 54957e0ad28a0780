"""The program the stand starts for ``type: spark-streaming``: the engine protocol ⇄ Spark
Structured Streaming, on the Python kit (`rsp_workbench.engines.kit.python`).

The adapter only translates. ``register`` compiles the query (`plan`, `job`), starts a SparkSession
on the configured master and the streaming query over a memory source; ``stimulus`` adds the
stimulus to that source as one JSON text and lets Spark run until it has processed everything
available (the tick: one micro-batch per stimulus, plus the no-data batch Spark runs when the
watermark moved); every row the sink receives is Spark's answer, sent as one response per window of
the micro-batch's output. ``advance`` adds an element-less row at that time: Spark's event time (and
so its watermark) moves only with data. A Spark failure ends the run with Spark's message in one line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from typing import Any, Mapping, Sequence

from rsp_workbench.engines.kit.python import EngineError, WrappedEngine, serve
from rsp_workbench.engines.sparkstream.plan import StreamPlan, check_static, compile_plan
from rsp_workbench.errors import UserError

#: The test hook that makes a real Spark job fail while it handles this stimulus id (``raise_error``
#: in the plan): what a failing job does to a run is then observable without imitating it.
FAIL_AT_STIMULUS = "RSPWB_SPARK_FAIL_AT_STIMULUS"
#: ``1``: the adapter measures itself and prints one ``{"profile": …}`` line on stderr at ``close``: the
#: wall time of its stimuli and how much of it Spark spent (``addData`` + ``processAllAvailable``).
PROFILE = "RSPWB_SPARK_PROFILE"
#: Temporary checkpoint folders: the prefix, then the adapter's process id (whose folder it is).
CHECKPOINT_PREFIX = "rspwb-spark-stream-"
CHECKPOINT_NAME = re.compile(re.escape(CHECKPOINT_PREFIX) + r"(\d+)-\w+")
#: The one stream element row of an ``advance`` (no triple): it moves the event time only.
NO_ELEMENTS: list[list[str]] = []


def one_line(error: BaseException) -> str:
    """Spark's own message, first line only (Py4J adds the Java stack trace after it)."""
    text = getattr(error, "desc", None) or str(error)
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    first = lines[0] if lines else type(error).__name__
    return first if len(first) <= 600 else first[:597] + "..."


def session_settings(master: str, parameters: Mapping[str, Any]) -> dict[str, str]:
    """The streaming engine's session: quiet, in UTC, few shuffle partitions (each is a state store
    that every micro-batch commits), bound to the loopback interface with a local master; ``heap``
    is the driver's ``-Xmx`` (``spark.driver.memory``, Spark's default 1g), read when its JVM starts."""
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(parameters.get("partitions") or 1),
        "spark.sql.streaming.numRecentProgressUpdates": "10",
    }
    if parameters.get("heap"):
        settings["spark.driver.memory"] = str(parameters["heap"])
    if master == "local" or master.startswith("local"):
        settings.update({"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"})
    return settings


def temporary_checkpoint(base: str | None = None) -> str:
    """A new checkpoint folder named after this process; first the folders of adapters that no
    longer run are removed (one killed by a timeout or a cancelled run never reaches ``close``)."""
    base = base or tempfile.gettempdir()
    for entry in os.scandir(base):
        owner = CHECKPOINT_NAME.fullmatch(entry.name)
        if owner is not None and entry.is_dir(follow_symlinks=False) and not _running(int(owner.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{CHECKPOINT_PREFIX}{os.getpid()}-", dir=base)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


class SparkStreamingEngine(WrappedEngine):
    """One continuous query as one Structured Streaming query."""

    def __init__(self) -> None:
        super().__init__()
        self.plan: StreamPlan | None = None
        self.batches: list[list[Any]] = []
        self.now: int | None = None
        self.checkpoint = ""
        self.owns_checkpoint = False
        self.query: Any = None
        self.fail_at = os.environ.get(FAIL_AT_STIMULUS)
        self.profile = {"stimuli": 0, "handling_ns": 0, "spark_ns": 0} if os.environ.get(PROFILE) == "1" else None

    def register(self, query: Mapping[str, Any], engine: Mapping[str, Any], static: Mapping[str, Any],
                 warm: bool = True) -> Mapping[str, Any]:
        """The query compiled and started; then one micro-batch over a row without a triple at time 0
        (``warm``), which no pattern matches, so that Spark's code generation and state stores are
        ready before the first stimulus (the stand measures that stimulus's latency)."""
        from rsp_workbench.experiment.spark_master import resolve_master
        from rsp_workbench.query.parser import parse_query

        parameters = dict(engine.get("parameters") or {})
        try:
            self.plan = compile_plan(parse_query(str(query.get("text") or ""), syntax=query.get("syntax")), parameters)
            check_static(static)
            master = resolve_master(parameters.get("master"))
        except UserError as error:
            raise EngineError(error.message) from None
        from pyspark.sql import DataFrame, SparkSession

        builder = SparkSession.builder.master(master).appName("rspwb-spark-streaming")
        for key, value in session_settings(master, parameters).items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        jvm: Any = self.spark._jvm  # Py4J's view of the driver's JVM
        memory = jvm.org.apache.spark.sql.execution.streaming.runtime.MemoryStream
        self.source = memory.apply(jvm.org.apache.spark.sql.Encoders.STRING(), self.spark._jsparkSession)
        self.to_seq = jvm.scala.jdk.javaapi.CollectionConverters.asScala
        given = parameters.get("checkpoint")
        self.checkpoint = str(given or temporary_checkpoint())
        self.owns_checkpoint = not given  # a temporary one, removed at close; the user's own stays
        from rsp_workbench.engines.sparkstream.job import answer, stream_rows

        result = answer(stream_rows(DataFrame(self.source.toDF(), self.spark), self.plan, failing=bool(self.fail_at)),
                        self.plan)
        self.writer = (result.writeStream.outputMode(self.plan.output).foreachBatch(self.received)
                       .option("checkpointLocation", self.checkpoint))
        self.variables = self.plan.projection
        try:
            if self.plan.trigger == "stimulus":
                self.query = self.writer.start()
            else:  # each stimulus starts an AvailableNow query; Spark's planner checks the first now
                self.writer.trigger(availableNow=True).start().awaitTermination()
        except Exception as error:  # noqa: BLE001 - Spark's AnalysisException: its reason is the message
            raise EngineError(f"Spark refuses the query: {one_line(error)}") from None
        if warm:  # the first micro-batch generates the plan's code: at registration, not in the first stimulus
            self.feed(0, NO_ELEMENTS)
            if self.profile is not None:
                self.profile["spark_ns"] = 0
        return {"engine": "spark-streaming", "spark": self.spark.version, "master": master,
                "output": self.plan.output, "trigger": self.plan.trigger}

    def received(self, frame: Any, batch: int) -> None:
        """Spark's sink (``foreachBatch``): the rows of one micro-batch's output, kept in arrival order."""
        self.batches.append(frame.collect())

    def push(self, t: int, elements: Sequence[Sequence[str]], streams: Sequence[str] | None) -> None:
        assert self.plan is not None
        started = time.perf_counter_ns()
        mine = [list(element[:3]) for index, element in enumerate(elements)
                if streams is None or streams[index] == self.plan.stream]
        if mine:
            self.feed(t, mine)
        if self.profile is not None:
            self.profile["stimuli"] += 1
            self.profile["handling_ns"] += time.perf_counter_ns() - started

    def advance(self, t: int) -> None:
        self.feed(t, NO_ELEMENTS)

    def feed(self, t: int, elements: list[list[str]]) -> None:
        """One stimulus into the memory source, then Spark's micro-batches over it, then its answers."""
        assert self.plan is not None
        self.now = t
        record: dict[str, Any] = {"t": t, "e": elements}
        if self.fail_at is not None and str(self._stimulus) == self.fail_at:
            record["fail"] = True
        text = json.dumps(record, ensure_ascii=False)
        started = time.perf_counter_ns()
        self.source.addData(self.to_seq([text]).toSeq())
        try:
            if self.plan.trigger == "stimulus":
                self.query.processAllAvailable()
            else:
                self.writer.trigger(availableNow=True).start().awaitTermination()
        except Exception as error:  # noqa: BLE001 - a failed Spark job fails this run, in Spark's words
            raise EngineError(f"Spark job failed: {one_line(error)}") from None
        if self.profile is not None:
            self.profile["spark_ns"] += time.perf_counter_ns() - started
        self.answer()

    def answer(self) -> None:
        """One response per window of each micro-batch's output, in the order Spark delivered them."""
        assert self.plan is not None
        operation = "=" if self.plan.output == "complete" or (self.plan.aggregates and self.plan.output == "append") else "+"
        for rows in self.batches:
            windows: dict[Any, list[dict[str, str]]] = {}
            for row in rows:
                windows.setdefault((row["window"]["start"], row["window"]["end"]), []).append(
                    {name: row[name] for name in self.variables if row[name] is not None})
            for key in sorted(windows):
                self.emit(windows[key], t=self.now, operation=operation)
        self.batches = []

    def close(self) -> None:
        if self.profile is not None:
            print(json.dumps({"profile": self.profile}), file=sys.stderr, flush=True)
        if self.query is not None:
            self.query.stop()
        if self.owns_checkpoint:
            shutil.rmtree(self.checkpoint, ignore_errors=True)


def check(message: Mapping[str, Any]) -> str | None:
    """Spark's verdict on a register message without running anything: None if Spark accepts the
    query in its output mode, else its reason in one line (``rspwb validate``). Its streaming query
    is started (Spark's planner checks it then) and stopped at once; the session stays for the next."""
    engine = SparkStreamingEngine()
    try:
        engine.register(message.get("query") or {}, message.get("engine") or {}, message.get("static") or {}, warm=False)
    except EngineError as error:
        return str(error)
    finally:
        engine.close()
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the protocol on stdin/stdout; ``--check``: one register message in, Spark's verdict out.

    The JVM Spark starts inherits stdout: the protocol keeps its own copy of it and stdout itself
    goes to stderr, so nothing the JVM prints can end up among the protocol lines."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    if arguments == ["--check"]:  # one verdict line per register line, all in one session
        for line in sys.stdin:
            if line.strip():
                protocol.write((json.dumps({"refused": check(json.loads(line))}) + "\n").encode("utf-8"))
                protocol.flush()
        return 0
    started = time.monotonic()
    code = serve(SparkStreamingEngine(), stdout=protocol)
    print(f"spark-streaming adapter: {time.monotonic() - started:.1f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
