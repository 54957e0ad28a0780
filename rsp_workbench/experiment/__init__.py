"""Experiment files: the YAML model of <engines, static data, streams, queries, KPIs>.

``load_experiment(path)`` validates a file (errors name FILE:LINE and the field path),
``expand_runs`` expands it into concrete runs (``variable_combinations`` lists its cases),
``apply_size`` applies a named size, ``experiment_to_yaml`` writes it back. Schema: docs/experiment-format.md.
``yabench_config`` reads YABench test configurations (``config.json``) and turns one into an
experiment file (``rspwb import yabench-config``).
``static_data.load_static`` reads an experiment's static data as engines and the oracle take it.
"""

from rsp_workbench.experiment.loader import (
    apply_size,
    build_experiment,
    dump_experiment,
    experiment_to_yaml,
    load_experiment,
    loads_experiment,
)
from rsp_workbench.experiment.model import (
    EngineSpec,
    Experiment,
    FlowSpec,
    KpiSpec,
    OracleSpec,
    QuerySpec,
    RunSpec,
    RunStream,
    StandSpec,
    StaticData,
    StreamSpec,
)
from rsp_workbench.experiment.runs import (
    count_runs,
    derive_seed,
    expand_runs,
    template_variables,
    variable_combinations,
)
from rsp_workbench.experiment.source import Position, SourceMap, load_yaml
from rsp_workbench.query.template import fill_template

__all__ = [
    "EngineSpec", "Experiment", "FlowSpec", "KpiSpec", "OracleSpec", "Position", "QuerySpec", "RunSpec", "RunStream",
    "SourceMap", "StandSpec", "StaticData", "StreamSpec", "apply_size", "build_experiment", "count_runs",
    "derive_seed", "dump_experiment", "expand_runs", "experiment_to_yaml", "fill_template", "load_experiment",
    "load_yaml", "loads_experiment", "template_variables", "variable_combinations",
]
