"""The plan (`rsp_workbench.engines.sparkstream.plan`) as Structured Streaming DataFrames.

Only translation: Spark's ``window`` assigns the windows, Spark's stream-stream joins match the
patterns (on their shared variables and the window), ``where`` filters, ``groupBy(window, …)``
counts, ``withWatermark`` and the output mode decide when a row leaves. The stream arrives as one
JSON text per stimulus (``{"t": ms, "e": [[s, p, o], …]}``, from the adapter's memory source) and
is exploded into rows ``(s, p, o, ts)``; a stimulus without elements of the window's stream is one
row without a triple (``explode_outer``), which no pattern matches but which moves the event time
(and so the watermark) as Spark's watermarks only move with data.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from rsp_workbench.engines.sparkstream.plan import NUMERIC_TYPES, XSD, Expression, StreamPlan, pattern_terms

STIMULUS_SCHEMA = "struct<t:bigint,e:array<array<string>>>"
FAILING_SCHEMA = "struct<t:bigint,e:array<array<string>>,fail:boolean>"
#: The columns of a stream row and of the window Spark assigns.
WINDOW = "window"
_LITERAL = r'^"(.*)"\^\^<([^>]*)>$'


def stream_rows(source: DataFrame, plan: StreamPlan, *, failing: bool = False) -> DataFrame:
    """The stimuli's JSON texts as rows ``(s, p, o, ts)``, with the plan's watermark on ``ts``.

    ``failing``: a stimulus marked ``"fail": true`` makes the job fail (Spark's ``raise_error``), for tests."""
    stimulus = F.from_json(F.col("value"), FAILING_SCHEMA if failing else STIMULUS_SCHEMA).alias("m")
    records = source.select(stimulus)
    if failing:
        records = records.where(F.when(F.col("m.fail"), F.raise_error(F.lit("forced failure of the stimulus marked to fail")))
                                .otherwise(F.lit(True)))
    rows = (records
            .select(F.timestamp_millis(F.col("m.t")).alias("ts"), F.explode_outer("m.e").alias("e"))
            .select(F.col("e")[0].alias("s"), F.col("e")[1].alias("p"), F.col("e")[2].alias("o"), "ts"))
    if plan.watermark_ms is not None:
        rows = rows.withWatermark("ts", f"{plan.watermark_ms} milliseconds")
    return rows


def spark_window(plan: StreamPlan) -> Column:
    """Spark's tumbling/sliding event-time window of the query's RANGE and STEP (start: the plan's)."""
    return F.window("ts", f"{plan.size_ms} milliseconds", f"{plan.slide_ms} milliseconds",
                    f"{plan.start_ms} milliseconds")


def pattern_rows(rows: DataFrame, plan: StreamPlan, index: int) -> DataFrame:
    """One triple pattern: the rows it matches, as its variables' columns and its window."""
    matched = rows.where(F.col("s").isNotNull())
    columns: dict[str, str] = {}
    for column, term, variable in pattern_terms(plan.patterns[index]):
        if not variable:
            matched = matched.where(F.col(column) == F.lit(term))
        elif term in columns:
            matched = matched.where(F.col(column) == F.col(columns[term]))
        else:
            columns[term] = column
    return matched.select(spark_window(plan).alias(f"{WINDOW}{index}"),
                          *(F.col(column).alias(name) for name, column in columns.items()))


def solutions(rows: DataFrame, plan: StreamPlan) -> DataFrame:
    """The BGP's solutions per window: the patterns' rows joined on shared variables and the window."""
    joined = pattern_rows(rows, plan, 0)
    bound = set(joined.columns) - {f"{WINDOW}0"}
    for index in range(1, len(plan.patterns)):
        other = pattern_rows(rows, plan, index)
        shared = sorted(bound & set(other.columns))
        renamed = other.select(*(F.col(c).alias(f"{c}#{index}") if c in shared else F.col(c) for c in other.columns))
        condition = F.col(f"{WINDOW}0") == F.col(f"{WINDOW}{index}")
        for name in shared:
            condition = condition & (F.col(name) == F.col(f"{name}#{index}"))
        joined = joined.join(renamed, condition).drop(f"{WINDOW}{index}", *(f"{c}#{index}" for c in shared))
        bound |= set(other.columns) - {f"{WINDOW}{index}"}
    joined = joined.withColumnRenamed(f"{WINDOW}0", WINDOW)
    for expression in plan.filters:
        joined = joined.where(condition_column(expression))
    return joined


def answer(rows: DataFrame, plan: StreamPlan) -> DataFrame:
    """The query's result table: the window and the projected variables (N-Triples text)."""
    found = solutions(rows, plan)
    if plan.group_by is None:
        return found.select(WINDOW, *plan.projection)
    integer = f'"%d"^^<{XSD}integer>'
    counts = [F.format_string(integer, (F.count_distinct if c.distinct else F.count)(
        F.col(c.variable) if c.variable else F.lit(1))).alias(c.name) for c in plan.counts]
    grouped = found.groupBy(WINDOW, *plan.group_by).agg(*counts) if counts else \
        found.groupBy(WINDOW, *plan.group_by).agg(F.count(F.lit(1)).alias("__rows"))
    return grouped.select(WINDOW, *plan.projection)


def numeric(column: Column) -> Column:
    """The numeric value of an N-Triples literal of a numeric XSD type, else null (a type error:
    the comparison it is in is not true, as in SPARQL)."""
    datatype = F.regexp_extract(column, _LITERAL, 2)
    return F.when(datatype.isin(*NUMERIC_TYPES), F.regexp_extract(column, _LITERAL, 1).cast("double"))


def operand_column(tree: Expression) -> tuple[Column, Column | None]:
    """(numeric value, term text or None) of a FILTER operand."""
    kind = tree[0]
    if kind == "var":
        return numeric(F.col(tree[1])), F.col(tree[1])
    if kind == "number":
        return F.lit(tree[1]), None
    if kind == "term":
        return F.lit(None).cast("double"), F.lit(tree[1])
    left, right = operand_column(tree[2])[0], operand_column(tree[3])[0]
    operations: dict[str, Any] = {"+": left + right, "-": left - right, "*": left * right, "/": left / right}
    return operations[tree[1]], None


def condition_column(tree: Expression) -> Column:
    """A FILTER as a boolean column; null (an error in SPARQL) keeps no row, as ``where`` does."""
    kind = tree[0]
    if kind == "and":
        return condition_column(tree[1]) & condition_column(tree[2])
    if kind == "or":
        return condition_column(tree[1]) | condition_column(tree[2])
    if kind == "not":
        return ~condition_column(tree[1])
    op, (left, left_term), (right, right_term) = tree[1], operand_column(tree[2]), operand_column(tree[3])
    if op in ("=", "!="):
        same = F.coalesce(left == right, F.lit(False))
        if left_term is not None and right_term is not None:
            same = same | (left_term == right_term)
        return same if op == "=" else ~same
    return {"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}[op]
