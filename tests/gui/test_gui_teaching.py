"""Teaching mode: the model recomputes when t0/policy change; the view builds and follows it."""

from __future__ import annotations

import pytest

from rsp_workbench.gui.teaching.model import TeachingModel

R1, R2 = "?room=:r1", "?room=:r2"


def test_rooms_t0_decides_the_answer() -> None:
    model = TeachingModel("rooms")
    sparqlstream = [c.label for c in model.columns].index("sparqlstream")
    assert model.emissions(sparqlstream) == [(10_000, "=", [R1]), (20_000, "=", [R2])]
    model.set_t0(2000)
    assert model.emissions(sparqlstream) == []
    model.set_t0(0)
    assert model.emissions(sparqlstream) == [(10_000, "=", [R1]), (20_000, "=", [R2])]


def test_rooms_policies_side_by_side() -> None:
    model = TeachingModel("rooms")
    by_label = {c.label: i for i, c in enumerate(model.columns)}
    assert model.emissions(by_label["cqels"]) == [(3000, "+", [R1]), (13_000, "+", [R2])]
    assert model.emissions(by_label["csparql"])[-1] == (30_000, "=", [])  # empty relation notified


def test_view_at_an_instant() -> None:
    model = TeachingModel("rooms")
    view = model.view(0, 10_000)  # C-SPARQL: the window [0, 10 s) closes and reports
    assert view.reports and str(view.scope) == "[0, 10000)"
    assert len(view.windows[0].content) == 2
    assert [sorted(map(str, r.elements())) for r in view.returned] and view.emitted
    quiet = model.view(0, 5000)
    assert not quiet.reports and not quiet.emitted and str(quiet.scope) == "[0, 10000)"


def test_changing_policy_r2s_and_border_recomputes() -> None:
    model = TeachingModel("rooms")
    custom = len(model.columns) - 1
    model.override(custom, report="content-change", r2s="istream", empty_notification=False)
    assert model.emissions(custom) == [(3000, "+", [R1]), (13_000, "+", [R2])]
    model.override(custom, r2s="dstream")
    assert model.emissions(custom) == [(10_000, "-", [R1]), (20_000, "-", [R2])]
    model.set_preset(custom, "sparqlstream")
    model.set_t0(1000)
    assert model.emissions(custom) == [(11_000, "=", [R1]), (21_000, "=", [R2])]


def test_coupon_example_matches_rspql_example_10_with_open_closed_borders() -> None:
    model = TeachingModel("coupon")
    model.override(3, border="open-closed", empty_notification=False)
    rows = model.emissions(3)
    assert [t for t, _, _ in rows] == [8000, 16_000]
    assert len(rows[0][2]) == 2 and len(rows[1][2]) == 1


pytest.importorskip("PySide6")


@pytest.mark.gui
def test_teaching_view_updates_immediately(qtbot, no_leaks) -> None:  # type: ignore[no-untyped-def]
    from rsp_workbench.gui.teaching.view import TeachingView

    view = TeachingView()
    qtbot.addWidget(view)
    view.resize(1300, 900)
    view.show()
    view.slider.setValue(10)  # 10 s
    sparqlstream = view.column_widgets[2]
    assert "r1" in sparqlstream.readout.text() and "evaluates now" in sparqlstream.readout.text()
    view.t0_spins[0].setValue(2)  # seconds, like the axis and the panels
    assert view.model.t0 == (2000,)
    assert "nothing yet" in sparqlstream.readout.text()
    view.example_buttons["coupon"].click()
    assert view.model.example.key == "coupon" and len(view.t0_spins) == 2
    view.step(1)
    assert view.model.time > 0
    view.close()
