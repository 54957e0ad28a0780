"""`rspwb windows`: the docs/design/CLI.md contract and the evaluation-instant table."""

from __future__ import annotations

import json

import pytest

from rsp_workbench.cli.main import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_contract_example_7(capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(
        capsys, "windows", "--size", "5", "--slide", "2", "--t0", "1", "--scope", "open-closed",
        "--from", "0", "--to", "10", "--unit", "ms", "--json",
    )
    assert payload["scope"] == "open-closed"
    assert [{"open": w["open"], "close": w["close"]} for w in payload["windows"]] == [
        {"open": 1, "close": 6}, {"open": 3, "close": 8}, {"open": 5, "close": 10},
    ]


def test_units_and_report(capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(
        capsys, "windows", "--size", "10s", "--unit", "s", "--times", "1,3,11,13,25",
        "--report", "window-close & non-empty", "--to", "40", "--json",
    )
    assert [(w["open"], w["close"], w["elements"]) for w in payload["windows"]] == [
        (0, 10, 2), (10, 20, 2), (20, 30, 1), (30, 40, 0),
    ]
    assert [e["time"] for e in payload["evaluations"]] == [10, 20, 30]


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["windows", "--size", "5", "--slide", "2", "--t0", "1", "--scope", "open-closed", "--to", "10"]) == 0
    out = capsys.readouterr().out
    assert "(1, 6]" in out and "(5, 10]" in out and "sliding" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--size", "5", "--slide", "0"], "--slide"),  # slide must be positive → field named
        (["--size", "abc"], "--size: invalid duration"),
        (["--size", "5", "--scope", "half-open"], "--scope: 'half-open' is not one of"),
        (["--size", "5", "--report", "sometimes"], "--report"),
        (["--size", "5", "--from", "10", "--to", "2"], "--to"),
    ],
)
def test_bad_options_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(["windows", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_os_errors_are_user_errors(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["generate", "--generator", "sg1", "--param", "duration=1s", "--out", str(blocker / "s.stream"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and str(blocker) in err
