"""Experiment files: loading, located validation errors, expansion, sizes, round trip, CLI."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rsp_workbench.cli.main as cli_main
from rsp_workbench.core.semantics import PRESETS, BorderConvention
from rsp_workbench.errors import UserError
from rsp_workbench.experiment import (
    apply_size,
    derive_seed,
    expand_runs,
    experiment_to_yaml,
    fill_template,
    load_experiment,
    load_yaml,
    loads_experiment,
    template_variables,
    variable_combinations,
)
from tests.paths import DATA as TEST_DATA

DATA = TEST_DATA / "experiments"
FULL = DATA / "full.yaml"
INVALID = sorted((DATA / "invalid").glob("*.yaml"))

MINIMAL = """\
name: minimal
stream:
  generator: sg1
  params: {stations: 2, interval: 1s, duration: 5s}
queries:
  - id: q1
    text: SELECT * WHERE { ?s ?p ?o }
engines:
  - id: e1
    type: secret
"""


def _expectation(path: Path) -> tuple[int, str | None, str]:
    """``# expect: LINE | FIELD | MESSAGE-START`` on the first line of each malformed sample."""
    header = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.fullmatch(r"# expect: (\d+) \| (\S+) \| (.+)", header)
    assert match, f"{path.name}: bad expectation header"
    field = None if match.group(2) == "-" else match.group(2)
    return int(match.group(1)), field, match.group(3)


def _load_text(tmp_path: Path, text: str, name: str = "exp.yaml") -> object:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_experiment(path)


# ----------------------------------------------------------------------------- valid


def test_full_sample_loads_every_section() -> None:
    experiment = load_experiment(FULL)
    assert experiment.name == "yabench-experiment-1"
    assert experiment.seed == 1430236906
    assert experiment.repetitions == 2
    assert experiment.variables == {"TEMP": 50.0, "WSIZE": "5s", "WSLIDE": "5s"}
    assert experiment.sweep == {"STATIONS": (50, 1000, 10000)}
    assert list(experiment.sizes) == ["smoke", "full"]
    assert experiment.stream.generator == "sg1"
    assert experiment.stream.flow is not None and experiment.stream.flow.shape == "constant"
    assert [s.format for s in experiment.static] == ["turtle", "turtle"]
    assert experiment.static[0].graph == "http://example.org/stations"
    assert experiment.static[1].file == DATA / "data" / "ontology.ttl"
    assert [q.id for q in experiment.queries] == ["q1", "q2"]
    assert experiment.queries[0].variables == ("WSIZE", "WSLIDE", "TEMP")
    assert experiment.queries[0].syntax == "csparql"
    csparql, cqels = experiment.engines
    # preset + overrides, via EngineSemantics.with_overrides
    assert csparql.semantics == PRESETS["csparql"].with_overrides(
        {"border": "closed-open", "report": "window-close & non-empty"}
    )
    assert csparql.semantics.border is BorderConvention.CLOSED_OPEN
    assert cqels.semantics == PRESETS["cqels"]
    assert cqels.faults == {"late_purge": True, "border_drift": False}
    assert experiment.kpis.sampling_ms == 500
    assert experiment.oracle.system == "engine" and experiment.oracle.t0 is None
    assert experiment.stand.timeout_ms == 60_000
    assert not experiment.requires_confirmation


def test_minimal_sample_gets_defaults(tmp_path: Path) -> None:
    experiment = _load_text(tmp_path, MINIMAL)
    assert experiment.seed == 0 and experiment.repetitions == 1
    assert experiment.engines[0].semantics == PRESETS["csparql"].__class__()
    assert experiment.kpis.names == ("latency", "throughput", "memory", "cpu", "threads", "correctness")
    assert experiment.stand.mode == "real-time"
    assert len(expand_runs(experiment)) == 1


def test_stream_file_formats_are_inferred(tmp_path: Path) -> None:
    shutil.copytree(DATA / "data", tmp_path / "data")
    text = MINIMAL.replace(
        "  generator: sg1\n  params: {stations: 2, interval: 1s, duration: 5s}\n", "  file: data/s.stream\n"
    )
    experiment = _load_text(tmp_path, text)
    assert experiment.stream.format == "yabench" and experiment.stream.interval_ms is None
    assert expand_runs(experiment)[0].stream_params == {}
    csr = _load_text(tmp_path, text.replace("data/s.stream", "data/csrbench\n  interval: 500ms"))
    assert csr.stream.format == "csrbench-dir" and csr.stream.interval_ms == 500
    default = _load_text(tmp_path, text.replace("data/s.stream", "data/csrbench"))
    assert default.stream.interval_ms == 1000


def test_external_engine_requires_confirmation(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        "type: secret", "type: external\n    parameters:\n      command: [java, -jar, engine.jar]\n      env: {JAVA_OPTS: -Xmx1g}"
    )
    experiment = _load_text(tmp_path, text)
    engine = experiment.engines[0]
    assert engine.requires_confirmation and experiment.requires_confirmation
    assert engine.command == ("java", "-jar", "engine.jar")
    run = expand_runs(experiment)[0]
    assert run.requires_confirmation
    assert run.engine_parameters["command"] == ("java", "-jar", "engine.jar")
    assert run.engine_parameters["env"] == {"JAVA_OPTS": "-Xmx1g"}
    assert run.engine_parameters["cwd"] == str(tmp_path)  # engine parameters travel as JSON


def test_engine_parameters_are_typed_per_combination(tmp_path: Path) -> None:
    shutil.copytree(DATA / "data", tmp_path / "data")
    text = MINIMAL.replace("name: minimal\n", "name: eviction\nsweep: {CACHE: [10, 100, 1000]}\n").replace(
        "  - id: e1\n    type: secret\n",
        "  - id: ev\n    type: eviction\n    parameters: {strategy: random, cache_size: '${CACHE}'}\n"
        "  - id: inc\n    type: incremental\n    parameters: {tbox: data/tbox.ttl}\n",
    )
    experiment = _load_text(tmp_path, text)
    runs = expand_runs(experiment)
    assert [r.engine_parameters["cache_size"] for r in runs if r.engine.id == "ev"] == [10, 100, 1000]
    assert all(r.engine_parameters["tbox"] == str(tmp_path / "data" / "tbox.ttl") for r in runs if r.engine.id == "inc")


def test_secret_parameters_are_typed(tmp_path: Path) -> None:
    """secret's t0 (one per window), report_window, drift knobs and matcher (rsp_workbench/engines/secret.py)."""
    text = MINIMAL.replace(
        "  - id: e1\n    type: secret\n",
        "  - id: e1\n    type: secret\n    faults: {border_drift: true}\n"
        "    parameters: {t0: [1s, 0], report_window: 1, drift_ms: 300, drift_per_element_ms: '0.5', matcher: rdflib}\n"
        "  - id: e2\n    type: naive\n    parameters: {t0: 2s, matcher: native}\n",
    )
    runs = expand_runs(_load_text(tmp_path, text))
    assert runs[0].engine_parameters == {
        "t0": [1000, 0], "report_window": 1, "drift_ms": 300, "drift_per_element_ms": 0.5, "matcher": "rdflib",
    }
    assert runs[1].engine_parameters == {"t0": 2000, "matcher": "native"}
    with pytest.raises(UserError, match=r"exp.yaml:11: engines\[0\].parameters.matcher: 'fast' is not one of auto"):
        _load_text(tmp_path, MINIMAL + "    parameters: {matcher: fast}\n")
    with pytest.raises(UserError, match=r"engines\[0\].parameters.t0: invalid duration"):
        _load_text(tmp_path, MINIMAL + "    parameters: {t0: [1s, soon]}\n")


def test_streams_section_binds_stream_iris_with_their_own_seeds_and_sizes(tmp_path: Path) -> None:
    """`streams:` maps stream IRIs to streams; each generated one gets its own seed; sizes merge per IRI."""
    from rsp_workbench.experiment.runs import derive_stream_seed

    text = MINIMAL.replace(
        "stream:\n  generator: sg1\n  params: {stations: 2, interval: 1s, duration: 5s}\n",
        "repetitions: 2\n"
        "streams:\n"
        "  http://example.org/S_a:\n    generator: sg1\n    params: {stations: 2, interval: 1s, duration: 5s}\n"
        "  http://example.org/S_b:\n    generator: sg1\n    params: {stations: 2, interval: 1s, duration: 5s, seed: 9}\n"
        "sizes:\n  smoke:\n    streams:\n      http://example.org/S_a: {params: {duration: 2s}}\n",
    )
    experiment = _load_text(tmp_path, text)
    assert experiment.named_streams and [s.iri for s in experiment.streams] == [
        "http://example.org/S_a", "http://example.org/S_b"]
    assert experiment.stream is experiment.streams[0]
    runs = expand_runs(experiment)
    for run in runs:
        a, b = run.streams
        assert a.params["seed"] == derive_stream_seed(run.seed, "http://example.org/S_a") != run.seed
        assert b.params["seed"] == 9  # set in the file: the same for every repetition
    assert runs[0].streams[0].params["seed"] != runs[1].streams[0].params["seed"]
    smoke = expand_runs(apply_size(experiment, "smoke"))[0]
    assert smoke.streams[0].params["duration"] == 2000 and smoke.streams[1].params["duration"] == 5000
    # the single `stream:` form is unchanged: no IRI, the run seed
    single = expand_runs(_load_text(tmp_path, MINIMAL))[0]
    assert single.stream.iri is None and single.stream_params["seed"] == single.seed


TWO_STREAMS = """\
name: two
variables: {W: PT2S, OTHER: S_b}
streams:
  http://example.org/S_a: {generator: sg1, params: {stations: 2, interval: 1s, duration: 5s}}
  http://example.org/S_b: {generator: sg1, params: {stations: 2, interval: 1s, duration: 5s}}
queries:
  - id: ok
    syntax: rspql
    text: |
      PREFIX : <http://example.org/>
      SELECT ?x
      FROM NAMED WINDOW :w1 ON :S_a [RANGE ${W} STEP ${W}]
      FROM NAMED WINDOW :w2 ON :${OTHER} [RANGE ${W} STEP ${W}]
      WHERE { WINDOW :w1 { ?x ?p ?o } WINDOW :w2 { ?x ?q ?v } }
engines:
  - {id: e, type: secret}
"""


def test_window_over_an_undeclared_stream_is_a_located_loader_error(tmp_path: Path) -> None:
    """`streams:` binds windows by IRI: a window over an IRI it does not declare fails at load time
    (not only at run time), at the window's line, for every variable combination."""
    assert [s.iri for s in _load_text(tmp_path, TWO_STREAMS).streams] == [
        "http://example.org/S_a", "http://example.org/S_b"]
    path = tmp_path / "exp.yaml"
    # a swept stream name: only the combination OTHER=S_c breaks, on line 14 (the :w2 clause)
    with pytest.raises(UserError) as caught:
        _load_text(tmp_path, TWO_STREAMS.replace("variables: {W: PT2S, OTHER: S_b}", "variables: {W: PT2S}\nsweep: {OTHER: [S_b, S_c]}"))
    assert str(caught.value) == (
        f"{path}:14: queries[0].text: query ok has a window over <http://example.org/S_c>, which 'streams' does not "
        "declare (declared: <http://example.org/S_a>, <http://example.org/S_b>)")
    # a query file: the `file:` line, and the line inside the file in the message
    (tmp_path / "q.rq").write_text("PREFIX : <http://example.org/>\nSELECT ?x\n"
                                   "FROM NAMED WINDOW :w ON :S_z [RANGE PT2S STEP PT2S]\nWHERE { WINDOW :w { ?x ?p ?o } }\n")
    text = TWO_STREAMS.split("    syntax: rspql")[0] + "    file: q.rq\nengines:\n  - {id: e, type: secret}\n"
    with pytest.raises(UserError) as caught:
        _load_text(tmp_path, text)
    error = caught.value
    assert (error.line, error.field) == (8, "queries[0].file")
    assert "window over <http://example.org/S_z> (q.rq line 3), which 'streams' does not declare" in error.message
    # a size may declare the stream a query needs, or take it away
    sized = TWO_STREAMS.replace("variables:", "sizes:\n  smoke: {streams: {http://example.org/S_b: null}}\nvariables:")
    with pytest.raises(UserError, match=r"exp.yaml:15: queries\[0\].text: .*<http://example.org/S_b>.*with size smoke\)$"):
        _load_text(tmp_path, sized)
    # the single `stream:` form reads every window, whatever IRI it names
    single = MINIMAL.replace("text: SELECT * WHERE { ?s ?p ?o }",
                             "syntax: csparql\n    text: SELECT ?s FROM STREAM <http://nowhere.example/s> [RANGE 5s STEP 1s] WHERE { ?s ?p ?o }")
    assert _load_text(tmp_path, single).stream.iri is None


def test_cli_validate_reports_an_undeclared_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cli_main, "COMMAND_MODULES", ("rsp_workbench.cli.validate_cmd",))
    path = tmp_path / "exp.yaml"
    path.write_text(TWO_STREAMS.replace("OTHER: S_b", "OTHER: S_x"), encoding="utf-8")
    assert cli_main.main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:13: queries[0].text: query ok has a window over <http://example.org/S_x>" in err


def test_yaml_merge_keys_and_anchors_are_supported(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        "  - id: e1\n    type: secret\n",
        "  - &base {id: e1, type: secret, semantics: {border: closed}}\n  - <<: *base\n    id: e2\n",
    )
    experiment = _load_text(tmp_path, text)
    assert [e.id for e in experiment.engines] == ["e1", "e2"]
    assert experiment.engines[1].semantics.border is BorderConvention.CLOSED


# ----------------------------------------------------------------------------- malformed samples


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_malformed_sample_names_file_line_and_field(path: Path) -> None:
    line, field, message = _expectation(path)
    with pytest.raises(UserError) as caught:
        load_experiment(path)
    error = caught.value
    assert (error.file, error.line, error.field) == (str(path), line, field), str(error)
    assert error.message.startswith(message), str(error)
    prefix = f"{path}:{line}: " + (f"{field}: " if field else "")
    assert str(error).startswith(prefix)


def test_there_is_a_malformed_sample_for_each_kind_of_error() -> None:
    assert len(INVALID) >= 40


def test_python_tag_is_never_executed(tmp_path: Path) -> None:
    marker = Path("/tmp/rspwb-pwned")
    marker.unlink(missing_ok=True)
    with pytest.raises(UserError, match="not allowed"):
        load_experiment(DATA / "invalid" / "python-tag.yaml")
    assert not marker.exists()
    with pytest.raises(UserError, match=r"exp.yaml:1: name: YAML tag '!!python/name:os.system'"):
        _load_text(tmp_path, "name: !!python/name:os.system ''\n")
    with pytest.raises(UserError, match=r":1: YAML tag '!!python/object:collections.OrderedDict'"):
        _load_text(tmp_path, "!!python/object:collections.OrderedDict {}\n")


def test_yaml_syntax_error_uses_the_yaml_mark(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        _load_text(tmp_path, "name: x\nengines:\n  - id: a\n   type: secret\n")
    assert caught.value.line == 4 and str(caught.value).startswith(f"{tmp_path / 'exp.yaml'}:4: invalid YAML")


def test_empty_file_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="the experiment file is empty"):
        _load_text(tmp_path, "# nothing\n")
    with pytest.raises(UserError, match="file not found"):
        load_experiment(tmp_path / "nope.yaml")


@pytest.mark.slow
def test_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    with pytest.raises(UserError, match="alias bomb"):
        load_yaml("\n".join(lines) + "\n", "bomb.yaml")


def test_recursive_alias_is_refused() -> None:
    with pytest.raises(UserError, match="recursive YAML alias"):
        load_yaml("a: &x [*x]\n", "r.yaml")


def test_source_map_records_keys_and_values() -> None:
    value, source = load_yaml("a:\n  b: [1, {c: 2}]\n", "f.yaml")
    assert value == {"a": {"b": [1, {"c": 2}]}}
    assert source.line("a.b[1].c") == 2 and source.position("a.b[1].c").column == 14
    assert source.line("a", key=True) == 1 and source.line("a") == 2
    assert source.line("a.b[7].zzz") == 2  # falls back to the nearest known field


def test_template_error_inside_a_query_file_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "q.rq").write_text("SELECT *\nWHERE { ?s ?p ${O} }\n", encoding="utf-8")
    text = MINIMAL.replace("text: SELECT * WHERE { ?s ?p ?o }", "file: q.rq")
    with pytest.raises(UserError, match=r"exp.yaml:7: queries\[0\].file: query q1 uses \$\{O\} \(q.rq line 2\)"):
        _load_text(tmp_path, text)


def test_query_file_not_found(tmp_path: Path) -> None:
    text = MINIMAL.replace("text: SELECT * WHERE { ?s ?p ?o }", "file: missing.rq")
    with pytest.raises(UserError, match=r"exp.yaml:7: queries\[0\].file: not found: missing.rq"):
        _load_text(tmp_path, text)


def test_generator_parameter_errors_are_located(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        _load_text(tmp_path, MINIMAL.replace("stations: 2", "statoins: 2"))
    assert caught.value.line == 4 and caught.value.field == "stream.params.statoins"
    assert "unknown parameter 'statoins'" in caught.value.message


def test_generator_whose_module_is_not_written_yet_keeps_raw_params(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rsp_workbench import generators

    monkeypatch.setitem(generators.GENERATOR_MODULES, "future", "rsp_workbench.generators._not_written_yet")
    text = MINIMAL.replace("generator: sg1", "generator: future").replace(
        "name: minimal\n", "name: future\nvariables: {N: 3}\n"
    ).replace("stations: 2", "anything: '${N}'")
    run = expand_runs(_load_text(tmp_path, text))[0]
    assert run.stream_params == {"anything": 3, "interval": "1s", "duration": "5s"}


def test_flow_settings_are_checked_and_random_flows_get_the_run_seed(tmp_path: Path) -> None:
    pytest.importorskip("rsp_workbench.generators.flows")
    bad = MINIMAL.replace("duration: 5s}\n", "duration: 5s}\n  flow:\n    shape: constant\n    rate: 2\n")
    with pytest.raises(UserError) as caught:
        _load_text(tmp_path, bad)
    assert (caught.value.line, caught.value.field) == (7, "stream.flow.rate")
    good = MINIMAL.replace("name: minimal\n", "name: f\nseed: 9\nrepetitions: 2\n").replace(
        "duration: 5s}\n", "duration: 5s}\n  flow: {shape: random, min: 1, max: 10}\n"
    )
    runs = expand_runs(_load_text(tmp_path, good))
    assert [r.flow.settings["seed"] for r in runs] == [9, derive_seed(9, 1)]


_MUTATIONS = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=200),
        st.sampled_from(["delete", "replace", "duplicate"]),
        st.sampled_from(["null", "[]", "{}", "1", "-1", "true", "x", "[1, 2]", "{a: 1}", "${X}", "''", "5s", "!!binary aGk="]),
    ),
    min_size=1,
    max_size=3,
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_MUTATIONS)
def test_any_broken_variant_of_the_sample_gives_a_located_user_error(mutations: list[tuple[int, str, str]]) -> None:
    lines = FULL.read_text(encoding="utf-8").splitlines()
    for position, operation, token in mutations:
        index = position % len(lines)
        if operation == "delete":
            del lines[index]
        elif operation == "replace" and ":" in lines[index]:
            lines[index] = lines[index][: lines[index].index(":") + 1] + " " + token
        else:
            lines.insert(index, lines[(index * 7) % len(lines)])
    try:
        loads_experiment("\n".join(lines) + "\n", file="f.yaml", base_dir=DATA)
    except UserError as error:
        assert error.file == "f.yaml" and error.line is not None, str(error)


# ----------------------------------------------------------------------------- templates, expansion, seeds


def test_fill_template_and_escapes() -> None:
    text = "FILTER(?v > ${TEMP}) # $${TEMP} ${FLAG}"
    assert template_variables(text) == ("TEMP", "FLAG")
    assert fill_template(text, {"TEMP": 50.0, "FLAG": True}) == "FILTER(?v > 50.0) # ${TEMP} true"
    with pytest.raises(KeyError):
        fill_template("${NOPE}", {})


def test_one_template_rule_for_query_text_and_typed_values(tmp_path: Path) -> None:
    """Query texts and YAML values share one filler: ${NAME} and CSRBench's %NAME%, typed when alone."""
    text = """\
name: templates
variables: {STATIONS: 3, TEMP: 50.0}
stream:
  generator: sg1
  params: {stations: "%STATIONS%", interval: 1s, duration: 5s}
queries:
  - id: q1
    text: "SELECT * WHERE { ?s ?p ?o FILTER(?o > %TEMP% && ?o < ${TEMP}) } # $${KEEP} <http://ex.org/a%20b>"
engines:
  - id: e1
    type: secret
"""
    experiment = _load_text(tmp_path, text)
    assert experiment.queries[0].variables == ("TEMP",)
    run = expand_runs(experiment)[0]
    assert run.stream_params["stations"] == 3 and isinstance(run.stream_params["stations"], int)
    assert run.query_text == "SELECT * WHERE { ?s ?p ?o FILTER(?o > 50.0 && ?o < 50.0) } # ${KEEP} <http://ex.org/a%20b>"


def test_percent_placeholder_without_value_names_the_query(tmp_path: Path) -> None:
    text = MINIMAL.replace("?s ?p ?o }", "?s ?p %MISSING% }")
    with pytest.raises(UserError) as info:
        _load_text(tmp_path, text)
    assert info.value.field == "queries[0].text" and "%MISSING%" in info.value.message


def test_sweep_expansion_counts_and_order() -> None:
    experiment = load_experiment(FULL)
    runs = expand_runs(experiment)
    # 3 sweep values × 2 repetitions × 2 engines × 2 queries
    assert len(runs) == 24
    assert [r.index for r in runs] == list(range(24))
    assert len({r.run_id for r in runs}) == 24
    assert runs[0].run_id == "case0-rep0-csparql-like-q1"
    assert [r.variables["STATIONS"] for r in runs[::8]] == [50, 1000, 10000]
    assert runs[0].stream_params["stations"] == 50 and runs[-1].stream_params["stations"] == 10000
    assert "[RANGE 5s STEP 5s]" in runs[0].query_text and "?v > 50.0" in runs[0].query_text
    assert "${" not in runs[1].query_text


def test_cases_times_sweep(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        "name: minimal\n",
        "name: cases\nvariables: {TEMP: 1}\ncases:\n  - {WSIZE: 5s}\n  - {WSIZE: 10s, TEMP: 2}\nsweep: {N: [1, 2, 3]}\n",
    ).replace("?o }", "?o FILTER(?o > ${TEMP}) } / ${WSIZE} ${N}")
    experiment = _load_text(tmp_path, text)
    combos = variable_combinations(experiment)
    assert len(combos) == 6
    assert combos[0] == {"TEMP": 1, "WSIZE": "5s", "N": 1}
    assert combos[3] == {"TEMP": 2, "WSIZE": "10s", "N": 1}
    assert expand_runs(experiment)[3].query_text.endswith("?o > 2) } / 10s 1")


def test_seeds_are_deterministic_and_shared_by_engines_of_a_repetition() -> None:
    first, second = expand_runs(load_experiment(FULL)), expand_runs(load_experiment(FULL))
    assert [r.seed for r in first] == [r.seed for r in second]
    assert first[0].seed == 1430236906  # repetition 0 uses the experiment seed as is
    rep1 = {r.seed for r in first if r.repetition == 1}
    assert rep1 == {derive_seed(1430236906, 1)}
    assert derive_seed(1430236906, 1) != 1430236906 and 0 <= derive_seed(1430236906, 1) < 2**63
    # the generator's seed parameter is filled from the run seed when the experiment leaves it unset
    assert all(r.stream_params.get("seed", r.seed) == r.seed for r in first)


def test_sizes_apply_overrides_and_pin_swept_variables() -> None:
    experiment = load_experiment(FULL)
    smoke = apply_size(experiment, "smoke")
    assert smoke.applied_size == "smoke"
    assert smoke.sweep == {} and smoke.variables["STATIONS"] == 5 and smoke.repetitions == 1
    assert smoke.stream.params["duration"] == "5s" and smoke.stream.params["interval"] == "1s"
    assert len(expand_runs(smoke)) == 4  # 1 combination × 1 repetition × 2 engines × 2 queries
    assert len(expand_runs(apply_size(experiment, "smoke"))) == 4
    assert len(expand_runs(apply_size(experiment, "full"))) == 24
    # the base experiment is untouched
    assert experiment.sweep == {"STATIONS": (50, 1000, 10000)} and experiment.raw["sweep"] == {"STATIONS": [50, 1000, 10000]}


def test_size_variables_pin_case_variables(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        "name: minimal\n",
        "name: pin\ncases:\n  - {A: 1, B: 1}\n  - {A: 2, B: 1}\n  - {A: 2, B: 2}\n"
        "sizes:\n  one-a: {variables: {A: 9}}\n  sweep-b: {sweep: {B: [5, 6]}}\n",
    ).replace("?o }", "?o } ${A} ${B}")
    experiment = _load_text(tmp_path, text)
    assert len(variable_combinations(experiment)) == 3
    assert variable_combinations(apply_size(experiment, "one-a")) == [{"A": 9, "B": 1}, {"A": 9, "B": 2}]
    assert variable_combinations(apply_size(experiment, "sweep-b")) == [
        {"A": 1, "B": 5}, {"A": 1, "B": 6}, {"A": 2, "B": 5}, {"A": 2, "B": 6},
    ]


def test_unknown_size_lists_defined_sizes() -> None:
    with pytest.raises(UserError, match=r"unknown size 'medium'; this experiment defines: smoke, full"):
        apply_size(load_experiment(FULL), "medium")


def test_size_null_removes_a_field(tmp_path: Path) -> None:
    text = MINIMAL + "stand: {timeout: 5s}\nsizes:\n  quick: {stand: null}\n"
    experiment = _load_text(tmp_path, text)
    assert experiment.stand.timeout_ms == 5000
    assert apply_size(experiment, "quick").stand.timeout_ms is None


def test_stand_batch_is_read_with_the_stands_default_when_absent(tmp_path: Path) -> None:
    assert _load_text(tmp_path, MINIMAL).stand.batch is None  # the stand's default (StandOptions.batch)
    for value in (1, 64, 1024):
        assert _load_text(tmp_path, MINIMAL + f"stand: {{mode: absolute-time, batch: {value}}}\n").stand.batch == value
    text = MINIMAL + "stand: {batch: 8}\nsizes:\n  quick: {stand: {batch: 1}}\n"
    assert apply_size(_load_text(tmp_path, text), "quick").stand.batch == 1


@pytest.mark.parametrize(("value", "message"), [
    ("0", "must be at least 1, got 0"),
    ("-4", "must be at least 1, got -4"),
    ("2.5", "expected an integer, got a number (2.5)"),
    ("'16'", "expected an integer, got a string ('16')"),
    ("true", "expected an integer, got a boolean (true)"),
    ("1025", "must be at most 1024 (a batch also stops at about that many elements), got 1025"),
])
def test_bad_stand_batch_names_file_line_and_field(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        _load_text(tmp_path, MINIMAL + f"stand:\n  mode: absolute-time\n  batch: {value}\n")
    assert str(caught.value) == f"{tmp_path / 'exp.yaml'}:13: stand.batch: {message}"


# ----------------------------------------------------------------------------- round trip


def test_yaml_round_trip_keeps_model_and_key_order(tmp_path: Path) -> None:
    experiment = load_experiment(FULL)
    text = experiment_to_yaml(experiment)
    again = loads_experiment(text, file="copy.yaml", base_dir=DATA)
    assert again == experiment
    assert list(again.raw) == list(experiment.raw)
    assert [r.query_text for r in expand_runs(again)] == [r.query_text for r in expand_runs(experiment)]
    assert "text: |" in text  # multi-line query templates stay readable


# ----------------------------------------------------------------------------- CLI


@pytest.fixture
def rspwb(monkeypatch: pytest.MonkeyPatch):
    """``rspwb`` with only the validate command registered (other commands are other modules)."""
    monkeypatch.setattr(cli_main, "COMMAND_MODULES", ("rsp_workbench.cli.validate_cmd",))
    return cli_main.main


def test_cli_validate_valid_file(rspwb, capsys: pytest.CaptureFixture[str]) -> None:
    assert rspwb(["validate", str(FULL)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert "yabench-experiment-1" in out and "2 engines" in out and "2 queries" in out and "24 runs" in out


def test_cli_validate_json(rspwb, capsys: pytest.CaptureFixture[str]) -> None:
    assert rspwb(["validate", str(FULL), "--json", "--size", "smoke"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["valid"] is True and payload["runs"] == 4 and payload["sizes"] == {"smoke": 4, "full": 24}
    assert payload["engines"] == ["csparql-like", "cqels-like"]


def test_cli_validate_invalid_file(rspwb, capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "invalid" / "bad-report.yaml"
    assert rspwb(["validate", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert f"{path}:16: engines[1].semantics.report: 'windowclose' is not one of" in lines[0]


def test_cli_validate_invalid_json(rspwb, capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "invalid" / "duplicate-key.yaml"
    assert rspwb(["validate", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["valid"] is False and payload["error"]["line"] == 12
    assert payload["error"]["field"] == "engines[0].type"
    assert captured.err.strip().endswith("duplicate key 'type' (first set on line 11)")


def test_cli_validate_external_command_is_shown(rspwb, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ext.yaml"
    path.write_text(MINIMAL.replace("type: secret", "type: external\n    parameters: {command: [./engine, --fast]}"))
    assert rspwb(["validate", str(path), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["requires_confirmation"] == [{"engine": "e1", "command": ["./engine", "--fast"]}]


def test_cli_validate_unknown_size(rspwb, capsys: pytest.CaptureFixture[str]) -> None:
    assert rspwb(["validate", str(FULL), "--size", "huge"]) == 2
    assert "unknown size 'huge'" in capsys.readouterr().err
