"""`rspwb probe`: the battery names every preset, finds each fault knob of `secret`, copes
with engines that crash or hang, and prints the documented JSON.

The inference is tested on answers of the built-in engines run in-process (the same code
the stand's worker runs, without a process per probe); the stand itself is exercised by
the CLI tests at the end (real engine processes, one external engine that crashes on one
probe and hangs on another).
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

import pytest

from rsp_workbench.cli.main import main
from rsp_workbench.core.semantics import PRESETS, BorderConvention
from rsp_workbench.engine import EngineConfig, Stimulus
from rsp_workbench.engines import create_engine
from rsp_workbench.probe.battery import FILLER, MATCH, SLIDE_MS, battery
from rsp_workbench.probe.infer import ProbeInference, ProbeObservation, infer
from rsp_workbench.probe.runner import builtin_target
from rsp_workbench.query.parser import parse_query
from rsp_workbench.responses.model import ResponseLog
from tests.paths import ROOT

EXAMPLE = ROOT / "rsp_workbench" / "engines" / "examples" / "tumbling_bgp.py"


def observe(config: EngineConfig) -> list[ProbeObservation]:
    """The engine's answer to every probe, run in-process (what the stand's worker does)."""
    observations = []
    for probe in battery():
        engine = create_engine(config)
        engine.register(parse_query(probe.query_text))
        responses = engine.run(probe.stimuli())
        log = ResponseLog(parse_query(probe.query_text).variables, tuple(responses), engine=config.type)
        observations.append(ProbeObservation(probe.name, "ok", log))
    return observations


def probe_builtin(name: str, *, preset: str | None = None, faults: Mapping[str, bool] | None = None,
                  semantics: Mapping[str, Any] | None = None) -> ProbeInference:
    target = builtin_target(name, preset=preset, faults=faults, semantics=semantics)
    return infer(target.label, battery(), observe(target.config))


# --- the battery itself -----------------------------------------------------------------------


def test_probes_keep_matching_elements_away_from_borders_except_the_border_probe() -> None:
    """So that a window read 100 ms late (border drift) only shows where it is looked for."""
    for probe in battery():
        # the clock starts at R: with the first element, or with an empty stimulus before it
        assert probe.elements[0].predicate == FILLER and probe.elements[0].t == probe.first_element
        assert probe.stimuli()[0].application_time == probe.registration <= probe.first_element
        assert probe.elements[-1].t > probe.horizon  # the sentinel closes every judged window
        if probe.name == "borders":
            continue
        for element in probe.elements:
            if element.predicate != MATCH:
                continue
            for origin in (probe.registration, 0):  # windows aligned on R, or on a fixed t0 = 0
                offset = (element.t - origin) % SLIDE_MS
                assert min(offset, SLIDE_MS - offset) >= 150, (probe.name, element)
    starts = {probe.registration % 100 for probe in battery()}
    assert starts == {0, 50}  # a t0 fixed at 0 is admissible with unit ms only


@pytest.mark.parametrize("preset", ["rsprs", "rspjs", "yabench-window-close"])
def test_the_origin_probe_is_hand_checked(preset: str) -> None:
    """A stream that starts at 0: q@0, a@1300, b@2200, c@3600, β = ω = 1 s, horizon 6600. Every
    alignment the battery knows (a hidden t0 = the first element's 0, or a t0 fixed at 0) gives the
    windows [1000, 2000) = {a}, [2000, 3000) = {b}, [3000, 4000) = {c}: reported at the next element
    (a at 2200, b at 3600, c after the horizon) or at the close (a at 2000, b at 3000, c at 4000; the
    YABench window-close oracle also reports the filler-only [0, 1000] and the empty [4000, 5000],
    [5000, 6000] as empty relations). rsp-rs, which takes t0 = 0 for "unset", would answer a and b
    together at 3600 (its windows anchored on a at 1300)."""
    (probe,) = [probe for probe in battery() if probe.name == "origin"]
    assert probe.registration == 0 and probe.horizon == 6600
    engine = create_engine(EngineConfig("secret", PRESETS[preset]))
    engine.register(parse_query(probe.query_text))
    answer = [(r.application_time, sorted(str(dict(m)["s"]).rsplit("-", 1)[1].strip(">") for m in r.bindings))
              for r in engine.run(probe.stimuli()) if r.application_time <= probe.horizon]
    expected = {
        "rsprs": [(2200, ["e1"]), (3600, ["e2"])],
        "rspjs": [(2200, ["e1"]), (3600, ["e2"])],
        "yabench-window-close": [(1000, []), (2000, ["e1"]), (3000, ["e2"]), (4000, ["e3"]), (5000, []), (6000, [])],
    }[preset]
    assert answer == expected


def answer_of(preset: str, probe_name: str, semantics: Mapping[str, Any] | None = None,
              stimuli: list[Stimulus] | None = None) -> list[tuple[int, list[str]]]:
    """The secret engine's answer under ``preset`` to one probe, from its registration to its
    horizon: (time, the element names e0, e1 … in the bindings' subjects)."""
    (probe,) = [probe for probe in battery() if probe.name == probe_name]
    engine = create_engine(EngineConfig("secret", PRESETS[preset].with_overrides(dict(semantics or {}))))
    engine.register(parse_query(probe.query_text))
    return [(r.application_time, sorted(str(dict(m)["s"]).rsplit("-", 1)[1].strip(">") for m in r.bindings))
            for r in engine.run(stimuli if stimuli is not None else probe.stimuli())
            if probe.registration <= r.application_time <= probe.horizon]


@pytest.mark.parametrize(("preset", "expected"), [
    # hidden t0 at the registration instant 1200: [1200, 2200) = {a}, [2200, 3200) = {b}, … each at its close
    ("csparql", [(2200, ["e1"]), (3200, ["e2"]), (4200, ["e3"]), (5200, ["e4"])]),
    # t0 at the first element 1600: [1600, 2600) = {a, b}; [2600, 3600) holds nothing (not posted);
    # [3600, 4600) = {c, d}
    ("esper-time-batch", [(2600, ["e1", "e2"]), (4600, ["e3", "e4"])]),
    # t0 fixed at 0: [1000, 2000) = {a} reported when b comes (2400), [2000, 3000) = {b} at c (3800),
    # [3000, 4000) = {c} at d (4400); {d} waits for the sentinel, after the horizon
    ("rspjs", [(2400, ["e1"]), (3800, ["e2"]), (4400, ["e3"])]),
    # the first element's windows, reported at the next element: {a, b} at c (3800); {c, d} after H
    ("rsprs", [(3800, ["e1", "e2"])]),
])
def test_the_first_element_probe_is_hand_checked(preset: str, expected: list[tuple[int, list[str]]]) -> None:
    """Empty stimulus at R = 1200 (the clock starts), then q@1600 (e0), a@1800, b@2400, c@3800,
    d@4400 (e1–e4), ω = β = 1 s, horizon 7400: the registration, the first element and t0 = 0
    put the windows in three different places."""
    assert answer_of(preset, "first-element") == expected


@pytest.mark.parametrize(("preset", "semantics", "expected"), [
    ("csparql", {}, [(3300, ["e1"]), (4300, ["e2"]), (5300, ["e3"]), (6300, ["e4"])]),  # on R = 2300
    ("esper-time-batch", {}, [(3700, ["e1"]), (4700, ["e2"]), (5700, ["e3"]), (6700, ["e4"])]),  # on F = 2700
    # reference point 0: [2000, 3000) holds only q@2700: evaluated (non-empty content), the empty
    # relation notified; [3000, 4000) = {a, b}; [4000, 5000) holds nothing; [5000, 6000) = {c, d}
    ("esper-time-batch-ref", {}, [(3000, []), (4000, ["e1", "e2"]), (6000, ["e3", "e4"])]),
    # reference point 500 (half a window): [2500, 3500) = {q, a}, … every close at …500
    ("esper-time-batch-ref", {"t0": 500}, [(3500, ["e1"]), (4500, ["e2"]), (5500, ["e3"]), (6500, ["e4"])]),
])
def test_the_reference_probe_is_hand_checked(preset: str, semantics: Mapping[str, Any],
                                             expected: list[tuple[int, list[str]]]) -> None:
    """Empty stimulus at R = 2300, then q@2700 (e0), a@3150, b@3850, c@5150, d@5850 (e1–e4):
    windows on R, on the first element, on 0 and on 500 close at …300, …700, …000 and …500."""
    assert answer_of(preset, "reference", semantics) == expected


@pytest.mark.parametrize(("semantics", "expected"), [
    # a tuple tick: every element is a content change, reported (Istream) as it comes; the slide
    # at 2150 empties the window (nothing new to report)
    ({}, [(1300, ["e1"]), (1450, ["e2"]), (1600, ["e3"]), (1750, ["e4"]), (2400, ["e5"]), (2550, ["e6"]),
          (2700, ["e7"])]),
    # a batch of 2: q@1150 and a tick in at a (1300), b and c at c (1600), d and e at e (2400) — d
    # has left the window [2150, 3150) by then and is never reported —, f and g at g (2700)
    ({"tick": "batch", "batch_size": 2}, [(1300, ["e1"]), (1600, ["e2", "e3"]), (2400, ["e5"]),
                                          (2700, ["e6", "e7"])]),
])
def test_the_micro_batch_probe_is_hand_checked(semantics: Mapping[str, Any],
                                               expected: list[tuple[int, list[str]]]) -> None:
    """cqels (content change, Istream) on q@1150 (e0), a@1300, b@1450, c@1600, d@1750, e@2400,
    f@2550, g@2700 (e1–e7), windows [1150, 2150), [2150, 3150)."""
    assert answer_of("cqels", "micro-batch", semantics) == expected


@pytest.mark.parametrize(("preset", "expected"), [
    # [1250, 2250) = {a}; [2250, 3250) holds the filler and c (taken as it comes, at 2651): {c}
    # at 3250; {d} at 4250
    ("csparql", [(2250, ["e1"]), (3250, ["e3"]), (4250, ["e4"])]),
    # [1000, 2000) = {a} reported when the filler comes (2650); [2000, 3000) = {filler, c} when
    # d comes (3700); {d} waits for the sentinel
    ("rspjs", [(2650, ["e1"]), (3700, ["e3"])]),
    # content change, Istream: a new at 1600, c at 2651 (its arrival), d at 3700
    ("cqels", [(1600, ["e1"]), (2651, ["e3"]), (3700, ["e4"])]),
])
def test_the_watermark_probe_is_hand_checked(preset: str, expected: list[tuple[int, list[str]]]) -> None:
    """q@1250 (e0), a@1600 (e1), a filler at 2650 (e2), then c@2450 (e3, late by 200 ms), d@3700
    (e4), horizon 6700. The oracle reads c where an engine that takes elements as they come sees
    it, at 2651; no window closes between 2450 and 2651 on any alignment, so c is in the windows
    its own time puts it in."""
    assert answer_of(preset, "watermark") == expected


@pytest.mark.slow  # the whole inference over every candidate when nothing explains a probe: ~30 s
def test_a_watermark_that_drops_the_late_element_is_named() -> None:
    """Spark's watermark (max event time − delay, delay < 200 ms) drops c: csparql's window
    [2250, 3250) then holds only the filler and answers the empty relation; what is missing
    reads only the late element: the `late_drop` signature (not a border drift)."""
    (probe,) = [probe for probe in battery() if probe.name == "watermark"]
    dropped = [stimulus for stimulus in probe.stimuli() if stimulus.application_time != 2450]
    assert answer_of("csparql", "watermark", stimuli=dropped) == [(2250, ["e1"]), (3250, []), (4250, ["e4"])]
    observations = [o if o.probe != "watermark" else observe_one("csparql", probe.name, dropped)
                    for o in observe(builtin_target("csparql").config)]
    inference = infer("csparql", battery(), observations)
    assert (inference.preset, dict(inference.overrides), inference.unexplained) == ("csparql", {}, ())
    assert [(finding.fault, finding.probes) for finding in inference.faults] == [("late_drop", ("watermark",))]
    assert "at t=3250" in inference.faults[0].evidence and "s=watermark-e3@2450" in inference.faults[0].evidence


def observe_one(preset: str, probe_name: str, stimuli: list[Stimulus]) -> ProbeObservation:
    (probe,) = [probe for probe in battery() if probe.name == probe_name]
    engine = create_engine(EngineConfig("secret", PRESETS[preset]))
    engine.register(parse_query(probe.query_text))
    log = ResponseLog(parse_query(probe.query_text).variables, tuple(engine.run(stimuli)), engine="secret")
    return ProbeObservation(probe.name, "ok", log)


# --- naming --------------------------------------------------------------------------------------


#: The presets the battery cannot tell from an earlier one (it names that one), each with the reason.
#: Every other preset must be named as itself: a new preset that is not is a gap in the battery.
PROBE_ALIASES = {
    # the same declared parameters: that Esper's `output all` sees only the last β of the window
    # is said by no parameter (rsp_workbench/engines/esper/README.md)
    "esper-time-all": "esper-time-snapshot",
    # the same declared parameters as append: what update sends differently (a group's changed count)
    # needs an aggregate query, and the battery's are BGPs (rsp_workbench/engines/sparkstream/README.md)
    "spark-update": "spark-append",
    # rspjs's declarations but per-evaluation grouping, which one-binding evaluations cannot show: the probe
    # names the earlier preset (rsp_workbench.probe.infer.NAMED_PRESETS)
    "spark-append-aggregate": "rspjs",
}


@pytest.mark.slow
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_preset_is_named_without_overrides(preset: str) -> None:
    inference = probe_builtin("secret", preset=preset)  # the secret engine under the preset
    assert inference.explained and not inference.unexplained and not inference.faults
    named = PROBE_ALIASES.get(preset, preset)
    assert (inference.preset, dict(inference.overrides)) == (named, {})
    semantics = PRESETS[named]
    parameters = inference.parameters
    assert parameters["border"] == semantics.border.value or semantics.border.value in inference.undetermined["border"]
    assert parameters["report"] == str(semantics.report)
    assert parameters["r2s"] == semantics.r2s.value
    assert parameters["empty_notification"] is semantics.empty_notification
    assert parameters["t0"] == semantics.t0
    assert parameters["time_unit"] == semantics.time_unit.value


@pytest.mark.slow
def test_overrides_are_named_on_the_closest_preset() -> None:
    inference = probe_builtin("secret", semantics={"border": "open-closed", "r2s": "dstream"})
    assert inference.explained
    assert inference.preset == "csparql"
    assert dict(inference.overrides) == {"border": "open-closed", "r2s": "dstream"}
    # CQELS with a time tick on a grid fixed at 0 is YABench's content-change oracle on [o, c), which is
    # exactly what Spark's append mode declares: no override is closer than none
    inference = probe_builtin("cqels", semantics={"tick": "time", "t0": 0})
    assert (inference.preset, dict(inference.overrides)) == ("spark-append", {})
    assert PRESETS["spark-append"] == replace(PRESETS["yabench-content-change"], border=BorderConvention.CLOSED_OPEN)
    assert inference.parameters["alignment"] == "fixed" and inference.parameters["time_unit"] == "ms"
    inference = probe_builtin("cqels", semantics={"empty_notification": True, "t0": 300})
    assert (inference.preset, dict(inference.overrides)) == ("cqels", {"empty_notification": True, "t0": 300})


# --- fault knobs (rsp_workbench/engines/secret.py; the oracle's own test: tests/engines/test_engine_secret.py) -------------


@pytest.mark.parametrize(("fault", "preset", "probes"), [
    ("late_purge", "cqels", {"join"}),
    ("late_purge", "csparql", {"join", "r2s", "borders", "alignment", "contemporaneous"}),
    ("border_drift", "csparql", {"borders"}),
    ("null_aggregate", "sparqlstream", {"count"}),
    ("misaligned_first_window", "csparql", {"sliding"}),
])
@pytest.mark.slow
def test_each_fault_knob_is_detected(fault: str, preset: str, probes: set[str]) -> None:
    inference = probe_builtin(preset, faults={fault: True})
    assert inference.preset == preset
    assert [finding.fault for finding in inference.faults] == [fault]
    assert probes <= set(inference.faults[0].probes)
    if fault == "misaligned_first_window":  # it *is* leading partial windows on a preset without them
        assert dict(inference.overrides) == {"leading_partial": True}
    else:
        assert dict(inference.overrides) == {}
    # what stays unexplained is a probe whose first divergence the fault's signature does not cover
    for item in inference.unexplained:
        assert item.divergence is not None and item.description


@pytest.mark.slow
def test_a_clean_engine_has_no_fault() -> None:
    inference = probe_builtin("csparql")
    assert inference.faults == () and inference.explained


# --- the stand, the CLI, JSON ----------------------------------------------------------------------

PARAMETER_KEYS = {"border", "report", "tick", "batch_size", "r2s", "empty_notification", "t0", "time_unit",
                  "leading_partial", "alignment", "grouping"}


@pytest.mark.slow
def test_cli_probes_a_builtin_engine_on_the_stand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "cqels", "--json", "--quiet"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) >= {"engine", "preset", "overrides", "explained", "parameters", "undetermined", "faults",
                            "unexplained", "failed", "probes"}
    assert payload["preset"] == "cqels" and payload["overrides"] == {} and payload["explained"] is True
    assert set(payload["parameters"]) == PARAMETER_KEYS
    assert payload["parameters"]["border"] == "closed-open" and payload["parameters"]["r2s"] == "istream"
    assert payload["failed"] == [] and payload["unexplained"] == []
    assert [p["name"] for p in payload["probes"]] == [p.name for p in battery()]
    assert all(p["status"] == "ok" and p["explained"] is True for p in payload["probes"])


def _experiment(tmp_path: Path, engine: str) -> Path:
    path = tmp_path / "probe.yaml"
    path.write_text(textwrap.dedent("""\
        name: probe
        seed: 1
        stream:
          generator: sg1
          params: {stations: 1, interval: 1s, duration: 2s}
        queries:
          - id: q
            text: |
              SELECT ?s FROM NAMED WINDOW <urn:w> ON <urn:s> [RANGE PT1S STEP PT1S]
              WHERE { WINDOW <urn:w> { ?s ?p ?o } }
        engines:
        """) + textwrap.indent(engine, "  "), encoding="utf-8")
    return path


@pytest.mark.slow
def test_crashing_and_hanging_probes_fail_and_the_others_go_on(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An external engine (the shipped example) that exits on COUNT queries and hangs on joins.

    The 8 s probe timeout leaves room for the example's rdflib import on a loaded machine (2 s did not
    at load 11); the join still hangs far past it."""
    wrapper = tmp_path / "moody_engine.py"
    wrapper.write_text(textwrap.dedent(f"""\
        import itertools, json, runpy, sys, time
        first = sys.stdin.buffer.readline()
        text = json.loads(first)["query"]["text"]
        if "COUNT" in text:
            sys.stderr.write("no aggregates here\\n")
            sys.exit(3)
        if "?a ?b" in text:
            time.sleep(60)
        class Replay:  # the example reads sys.stdin.buffer line by line
            buffer = itertools.chain([first], sys.stdin.buffer)
        sys.stdin = Replay
        runpy.run_path({str(EXAMPLE)!r}, run_name="__main__")
        """), encoding="utf-8")
    engine = f"- id: moody\n  type: external\n  parameters: {{command: [{sys.executable!r}, {str(wrapper)!r}]}}\n"
    path = _experiment(tmp_path, engine)
    # not confirmed and stdin is not a terminal: refused before anything runs
    assert main(["probe", f"{path}:moody"]) == 2
    assert "--yes" in capsys.readouterr().err
    code = main(["probe", f"{path}:moody", "--yes", "--json", "--quiet", "--timeout", "8",
                 "--only", "count", "--only", "join", "--only", "borders", "--only", "empty"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 1
    failed = {item["probe"]: item for item in payload["failed"]}
    assert set(failed) == {"count", "join"}
    assert failed["count"]["status"] == "failed" and "no aggregates here" in failed["count"]["error"]
    assert failed["join"]["status"] == "timeout"
    statuses = {p["name"]: p["status"] for p in payload["probes"]}
    assert statuses == {"borders": "ok", "empty": "ok", "count": "failed", "join": "timeout"}
    # the probes that ran still characterise it: tumbling [o, c) on a grid fixed at 0, reported at close
    assert payload["parameters"]["border"] == "closed-open" and payload["parameters"]["t0"] == 0
    assert payload["parameters"]["empty_notification"] is False


def test_bad_engine_names_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown engine 'nope'" in err and "cqels" in err
    path = _experiment(tmp_path, "- {id: one, type: secret, preset: cqels}\n")
    assert main(["probe", f"{path}:two"]) == 2
    assert "no engine 'two'" in capsys.readouterr().err
    assert main(["probe", "--experiment", str(path), "--engine", "one", "--fault", "late_purge"]) == 2
    assert "--fault" in capsys.readouterr().err
    assert main(["probe", "secret", "--fault", "slow"]) == 2
    assert "unknown fault 'slow'" in capsys.readouterr().err
    assert main(["probe", "cqels", "--preset", "csparql"]) == 2
    assert "secret --preset csparql" in capsys.readouterr().err
    assert main(["probe", "naive", "--fault", "late_purge"]) == 2
    assert "belong to the secret engine" in capsys.readouterr().err


def test_grouping_is_an_override_where_the_named_preset_groups_otherwise() -> None:
    from rsp_workbench.core.semantics import PRESETS
    from rsp_workbench.probe.infer import Candidate, overrides_from

    per_binding = Candidate(PRESETS["cqels"], alignment=None, regroup=True)
    assert overrides_from(PRESETS["cqels"], per_binding) == {"grouping": "binding"}
    rspjs = PRESETS["rspjs"]
    assert overrides_from(rspjs, Candidate(rspjs, alignment=0, regroup=True)) == {}
    assert overrides_from(rspjs, Candidate(rspjs, alignment=0, regroup=False)) == {"grouping": "evaluation"}


# --- engine parameters on the command line ------------------------------------------------------


def test_param_options_are_checked_against_the_engine_types_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "esper", "--param", "windo=time"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--param windo: unknown esper engine parameter" in err and "'window'" in err
    assert main(["probe", "esper", "--param", "window=weekly"]) == 2
    assert "--param window: 'weekly' is not one of time_batch, time" in capsys.readouterr().err
    assert main(["probe", "esper", "--param", "window=time", "--all-combinations"]) == 2
    assert "give one of them" in capsys.readouterr().err
    assert main(["probe", "secret", "--param", "matcher=fast"]) == 2
    assert "--param matcher" in capsys.readouterr().err
    assert main(["probe", "sample_experiments/csrbench/csrbench.yaml:csparql", "--param", "t0=1"]) == 2
    assert "configured in its file" in capsys.readouterr().err


def test_every_combination_is_a_declared_variant_with_its_preset() -> None:
    from rsp_workbench.engine import PROGRAM_ENGINES
    from rsp_workbench.probe.runner import parameter_combinations

    combinations = parameter_combinations("esper")
    assert combinations == [{}, {"window": "time", "output": "all"}, {"window": "time"}, {"stream": "rstream"},
                            {"reference_point": 0}]
    assert [PROGRAM_ENGINES["esper"].preset_for(c) for c in combinations] == [
        "esper-time-batch", "esper-time-all", "esper-time-snapshot", "esper-time-batch-rstream", "esper-time-batch-ref"]
    assert parameter_combinations("secret") == [{}] and parameter_combinations("cqels") == [{}]
    assert parameter_combinations("rspjs") == [{}]


@pytest.mark.slow
def test_cli_probes_with_parameters_and_every_combination(capsys: pytest.CaptureFixture[str]) -> None:
    # a t0 given as an engine parameter: the windows close at …300 in both probes, which says so
    assert main(["probe", "secret", "--param", "t0=300", "--only", "borders", "--only", "first-element",
                 "--json", "--quiet"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["engine"] == "secret t0=300" and payload["parameters"]["t0"] == 300
    assert main(["probe", "naive", "--all-combinations", "--only", "borders", "--json", "--quiet"]) == 0
    payloads = json.loads(capsys.readouterr().out)
    assert [p["engine"] for p in payloads] == ["naive"] and payloads[0]["explained"] is True
