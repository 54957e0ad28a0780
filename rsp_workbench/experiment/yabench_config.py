"""YABench test configurations (``config.json`` + ``engine.query`` + ``oracle.query``) read and
turned into an experiment file (``rspwb import yabench-config DIR --out exp.yaml``).

A YABench test folder (yabench.txt Sect. 3.1) declares one engine, a stream generator
(``generator``, ``seed``, ``interval``, ``duration``), query variables (``vars``: TEMP, WSIZE,
WSLIDE, WPOLICY …), the oracle's mode (``graceful``) and a list of ``tests`` that override
settings (``stations``, ``runs`` …). The experiment file keeps the names: ``vars`` become
``variables`` (the engine query's ``${…}`` placeholders stay as written), each test becomes a
case (``TEST`` = its name, ``STATIONS`` …), the engine name and ``WPOLICY`` choose presets,
``graceful`` the oracle's gracious mode; what has no counterpart is said in a comment.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

from rsp_workbench.errors import UserError

CONFIG = "config.json"
ENGINE_QUERY = "engine.query"
ORACLE_QUERY = "oracle.query"
#: YABench's ``generator`` names → the workbench's generators.
GENERATORS = {"sg1": "sg1"}
#: ``enginename`` → the built-in engine preset that models it (CSRBench Table 1 / YABench).
ENGINE_PRESETS = {"csparql": "csparql", "c-sparql": "csparql", "cqels": "cqels"}
#: ``WPOLICY`` → the YABench oracle preset with that report policy (yabench.txt Sect. 3.4).
POLICY_PRESETS = {"onwindowclose": "yabench-window-close", "oncontentchange": "yabench-content-change"}
#: Per-test settings that are stream parameters (as the runner passes them to the generator).
STREAM_SETTINGS = {"stations": "STATIONS", "interval": "INTERVAL", "duration": "DURATION",
                   "max_temp": "MAX_TEMP", "min_temp": "MIN_TEMP"}
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class YabenchTest:
    """One entry of ``config.json`` ``tests``: its name, declared repetitions (``runs``) and settings."""

    name: str
    runs: int | None
    settings: Mapping[str, Any]


def read_config(folder: Path, warnings: list[str] | None = None) -> dict[str, Any]:
    """``config.json`` of a test folder (a located UserError if it is not a JSON object).

    A comma before a closing ``}`` or ``]`` is read as if it were not there, as YABench's own
    reader did (YABench-One's Experiment_3/cqels has one): one line naming file:line:column
    is added to ``warnings``.
    """
    path = folder / CONFIG
    try:
        text = path.read_text(encoding="utf-8")
        try:
            config = json.loads(text)
        except json.JSONDecodeError as error:
            cleaned, commas = without_trailing_commas(text)
            try:
                config = json.loads(cleaned) if commas else None
            except json.JSONDecodeError:
                commas = []
            if not commas:
                raise error from None
            if warnings is not None:
                warnings += [f"{path}:{line}:{column}: trailing comma before a closing bracket, read as if it "
                             "were not there (YABench's reader took it)" for line, column in commas]
    except json.JSONDecodeError as error:
        raise UserError(f"not valid JSON: {error.msg}", file=str(path), line=error.lineno, column=error.colno) from None
    except FileNotFoundError:
        raise UserError(f"no {CONFIG}: not a YABench test folder", file=str(folder)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"cannot read: {error}", file=str(path)) from None
    if not isinstance(config, dict):
        raise UserError("expected a JSON object", file=str(path))
    return config


def without_trailing_commas(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` without the commas that only whitespace separates from a closing ``}``/``]``
    (outside strings), and where each was (line, column, from 1)."""
    out: list[str] = []
    commas: list[tuple[int, int]] = []
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            in_string = not (char == '"' and not escaped)
            escaped = char == "\\" and not escaped
        elif char == '"':
            in_string = True
        elif char == "," and text[index + 1:].lstrip()[:1] in ("}", "]"):
            line = text.count("\n", 0, index) + 1
            commas.append((line, index - text.rfind("\n", 0, index)))
            out.append(" ")
            continue
        out.append(char)
    return "".join(out), commas


def config_tests(config: Mapping[str, Any], file: str | None = None) -> list[YabenchTest]:
    """The tests a config declares (``runs`` is None when it does not say how many)."""
    tests = config.get("tests") or []
    if not isinstance(tests, list):
        raise UserError("expected a list of tests", file=file, field="tests")
    found = []
    for index, test in enumerate(tests):
        if not isinstance(test, Mapping) or not str(test.get("name", "")).strip():
            raise UserError("a test needs a name", file=file, field=f"tests[{index}].name")
        runs = test.get("runs", config.get("runs"))
        try:
            count = None if runs is None else int(runs)
        except (TypeError, ValueError):
            raise UserError(f"runs is not a number: {runs!r}", file=file, field=f"tests[{index}].runs") from None
        settings = {k: v for k, v in test.items() if k not in ("name", "runs")}
        found.append(YabenchTest(str(test["name"]), count, settings))
    return found


def typed(value: Any) -> Any:
    """YABench writes every value as text ("50.0", "10", "5s", "true"): numbers and booleans get
    their type back (so ``stations: ${STATIONS}`` is an integer), durations stay text."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _identifier(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", text.strip()).strip("-").lower()
    return cleaned or "engine"


@dataclass(frozen=True)
class ImportedExperiment:
    """The experiment file's text and the query file it refers to (relative to the experiment)."""

    yaml_text: str
    query_file: str
    query_text: str
    unmapped: tuple[str, ...]
    warnings: tuple[str, ...] = ()  # one line each, naming file:line:column


def import_yabench_config(folder: str | Path, query_file: str) -> ImportedExperiment:
    """The experiment for a YABench test folder; ``query_file`` is where ``engine.query`` will be
    copied, relative to the experiment file."""
    root = Path(folder)
    warnings: list[str] = []
    config = read_config(root, warnings)
    config_file = str(root / CONFIG)
    tests = config_tests(config, config_file)
    query_path = root / ENGINE_QUERY
    try:
        query_text = query_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"no {ENGINE_QUERY}: the test folder has no engine query", file=str(root)) from None
    notes: list[str] = []

    generator_name = str(config.get("generator") or "SG1")
    generator = GENERATORS.get(generator_name.strip().lower())
    if generator is None:
        raise UserError(f"generator {generator_name!r} has no workbench counterpart (known: "
                        f"{', '.join(sorted(g.upper() for g in GENERATORS))})", file=config_file, field="generator")

    vars_ = config.get("vars") or {}
    if not isinstance(vars_, Mapping):
        raise UserError("expected an object of variables", file=config_file, field="vars")
    policy = str(vars_.get("WPOLICY") or "").strip()
    variables: dict[str, Any] = {str(k): typed(v) for k, v in vars_.items() if k != "WPOLICY"}
    stream_variables: dict[str, Any] = {}
    for setting, name in STREAM_SETTINGS.items():
        if setting in config:
            stream_variables[name] = typed(config[setting])
    used = {match.group(1): query_text.count("\n", 0, match.start()) + 1 for match in _PLACEHOLDER.finditer(query_text)}
    if "WPOLICY" in used:
        variables["WPOLICY"] = policy
    cases: list[dict[str, Any]] = []
    for test in tests:
        case: dict[str, Any] = {"TEST": test.name}
        for key, value in test.settings.items():
            if key in STREAM_SETTINGS:
                case[STREAM_SETTINGS[key]] = typed(value)
            elif key in vars_ or key in used:
                case[key] = typed(value)
            else:
                notes.append(f"tests.{test.name}.{key} = {value!r}: no counterpart, not imported")
        cases.append(case)
    in_cases = {k for case in cases for k in case}
    for name in list(stream_variables):
        if name in in_cases:  # a case variable must not also be a plain variable
            for case in cases:
                case.setdefault(name, stream_variables[name])
            del stream_variables[name]
    variables.update(stream_variables)
    for name, value in (("STATIONS", 1), ("INTERVAL", "1s"), ("DURATION", "30s")):
        if name not in variables and name not in in_cases:
            variables[name] = value
            notes.append(f"{name} not set in {CONFIG}: {value!r} assumed")
    undefined = [name for name in used if name not in variables and not all(name in c for c in cases or [{}])]
    if undefined:
        name = undefined[0]
        raise UserError(f"${{{name}}} is not in vars of {CONFIG}", file=str(query_path), line=used[name])

    runs = sorted({t.runs for t in tests if t.runs is not None})
    repetitions = runs[-1] if runs else 1
    if len(runs) > 1:
        notes.append(f"tests declare different runs ({', '.join(map(str, runs))}): repetitions = {repetitions} for all")

    engine_name = str(config.get("enginename") or root.name)
    preset = ENGINE_PRESETS.get(engine_name.strip().lower()) or POLICY_PRESETS.get(policy.lower())
    if preset is None:
        notes.append(f"engine {engine_name!r} and WPOLICY {policy!r} match no preset: default semantics")
    oracle_system = POLICY_PRESETS.get(policy.lower())
    if oracle_system is None:
        notes.append(f"WPOLICY {policy!r} is neither onwindowclose nor oncontentchange: the oracle uses "
                     "each engine's own semantics")
    graceful = typed(config.get("graceful", False)) is True
    if (root / ORACLE_QUERY).is_file():
        notes.append(f"{ORACLE_QUERY} not needed: the oracle evaluates the engine query under the "
                     "chosen semantics (YABench's oracle ran a static SPARQL copy of it)")
    for key in sorted(set(config) - {"generator", "enginename", "seed", "vars", "graceful", "tests", "runs",
                                     *STREAM_SETTINGS}):
        notes.append(f"{key} = {json.dumps(config[key])[:60]}: no counterpart, not imported")

    seed = typed(config.get("seed", 0))
    if not isinstance(seed, int) or seed < 0:
        raise UserError(f"seed is not a non-negative integer: {config.get('seed')!r}", file=config_file, field="seed")
    params: dict[str, Any] = {"stations": "${STATIONS}", "interval": "${INTERVAL}", "duration": "${DURATION}"}
    if "MAX_TEMP" in variables or "MAX_TEMP" in in_cases:
        params["max_temp"] = "${MAX_TEMP}"
    if "MIN_TEMP" in variables or "MIN_TEMP" in in_cases:
        params["min_temp"] = "${MIN_TEMP}"
    engine: dict[str, Any] = {"id": _identifier(engine_name), "type": "secret"}
    if preset:
        engine["preset"] = preset
    document: dict[str, Any] = {
        "name": f"yabench-{_identifier(root.name)}",
        "description": f"Imported from the YABench test folder {root.resolve()} (rspwb import yabench-config).",
        "seed": seed,
        "repetitions": repetitions,
        "variables": variables,
    }
    if cases:
        document["cases"] = cases
    document["sizes"] = {
        "smoke": {"variables": {"STATIONS": 3, "DURATION": "6s"}, "repetitions": 1,
                  "stand": {"mode": "absolute-time"}},
        "full": {},
    }
    document["stream"] = {"generator": generator, "params": params}
    document["queries"] = [{"id": "q1", "file": query_file}]
    document["engines"] = [engine]
    document["kpis"] = {"collect": ["latency", "throughput", "memory", "cpu", "threads", "correctness"],
                        "sampling": "500ms"}
    document["oracle"] = {"system": oracle_system or "engine", "match": "strict", "gracious": graceful, "t0": "0s"}
    document["stand"] = {"mode": "real-time", "time_scale": 1.0}
    header = [
        f"# Imported from YABench: {root.resolve()}",
        f"#   config.json → variables (vars), cases (tests: TEST = the test's name), seed, stream ({generator_name});",
        f"#   engine.query → {query_file} (its ${{…}} placeholders are the variables below);",
        f"#   enginename {engine_name!r} → engine preset {preset or '(none)'}; WPOLICY {policy!r} → oracle "
        f"{oracle_system or 'engine'}; graceful → oracle.gracious.",
        "#   The engine is the workbench's model of it (type: secret); to measure the real engine give it",
        "#   as type: external (docs/engine-protocol.md). Repetition 0 uses YABench's seed, so its stream is",
        "#   the one YABench's SG1 generated; later repetitions derive their seeds (docs/experiment-format.md).",
    ]
    if notes:
        header.append("# Not mapped:")
        header += [f"#   - {note}" for note in notes]
    text = "\n".join(header) + "\n" + yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    return ImportedExperiment(text, query_file, query_text, tuple(notes), tuple(warnings))


def import_targets(folder: str | Path, out: str | Path) -> tuple[Path, Path]:
    """(experiment file, query file) that importing the test folder into ``out`` writes: the engine
    query goes to ``queries/<folder>.rq`` next to the experiment file."""
    return Path(out), Path(out).parent / "queries" / f"{Path(folder).resolve().name}.rq"


def write_imported_experiment(folder: str | Path, out: str | Path, *, force: bool = False) -> ImportedExperiment:
    """Write the experiment file ``out`` for a YABench test folder and its query file next to it, then
    check that the file validates (the contract of ``rspwb import yabench-config``; the app's
    File › Import runs this same function). A target that exists is refused unless ``force``."""
    from rsp_workbench.experiment.loader import load_experiment

    out, query_path = import_targets(folder, out)
    imported = import_yabench_config(folder, query_path.relative_to(out.parent).as_posix())
    for target in (out, query_path):
        if target.exists() and not force:
            raise UserError("exists (give --force to replace it)", file=str(target))
    query_path.parent.mkdir(parents=True, exist_ok=True)
    query_path.write_text(imported.query_text, encoding="utf-8")
    out.write_text(imported.yaml_text, encoding="utf-8")
    load_experiment(out)  # what was written validates (a UserError here names the line)
    return imported
