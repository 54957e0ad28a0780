"""The ``semantics:`` mapping as a form (SECRET scope/content/report/tick + R2S), shared by an
engine's semantics (Engines section) and the oracle's overrides (Oracle section).

Unset fields show the preset's value, so the form says what the engine will really do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from rsp_workbench.core.semantics import EngineSemantics
from rsp_workbench.errors import UserError
from rsp_workbench.gui.designer.fields import DesignerSection
from rsp_workbench.gui.designer.model import MISSING, FieldPath, scalar_text

SEMANTICS_CHOICES = {
    "border": ("closed-open", "open-closed", "closed"),
    "tick": ("tuple", "time", "batch"),
    "r2s": ("rstream", "istream", "dstream"),
    "time_unit": ("ms", "100ms", "s", "m", "h"),
    "active_window": ("earliest", "latest"),
    "empty_notification": (True, False),
    "leading_partial": (True, False),
    "grouping": ("evaluation", "binding"),
}
SEMANTICS_LABELS = (  # key, label, what it decides (tooltip)
    ("border", "Border convention", "which window borders are inclusive: [o, c), (o, c] or [o, c]"),
    ("tick", "Tick", "what makes the engine evaluate: every element, every time instant, or a batch"),
    ("r2s", "R2S operator", "relation-to-stream: Rstream (all), Istream (new), Dstream (gone)"),
    ("empty_notification", "Empty relations", "empty-relation notification: report an empty answer"),
    ("time_unit", "Time unit", "the engine's clock resolution"),
    ("active_window", "Active window", "which window is active when several are open"),
    ("leading_partial", "Leading partials", "YABench's first windows shorter than the size"),
    ("grouping", "Responses", "one response per evaluation, or one per binding (judged regrouped by instant)"),
)
STRATEGY_BOXES = (("CC", "content-change"), ("WC", "window-close"), ("NE", "next-element"), ("NC", "non-empty"),
                  ("P", "periodic"))


@dataclass(frozen=True)
class ReportBoxes:
    """The report-policy widgets of one semantics form (tests and scripts tick them)."""

    widget: QWidget
    override: QCheckBox
    strategies: dict[str, QCheckBox]  # long strategy name → its check box
    period: QLineEdit


@dataclass(frozen=True)
class SemanticsForm:
    box: QGroupBox
    report: ReportBoxes


#: Which of the four t0 fields wins (docs/experiment-format.md), said where each is edited.
T0_RULES = {
    "semantics": "the engine's t0: a duration such as 0s, or auto (hidden: the first element's time). The engine "
                 "parameter t0 says the same (not both). The oracle judges with it when oracle.system is engine "
                 "and oracle.t0 is unset; oracle.t0 wins over it for judging",
    "oracle_semantics": "a t0 override of the oracle system's preset; oracle.t0 (above) wins over it when set",
    "parameter": "the engine's window start: a duration, or [one per window]; not together with semantics.t0. "
                 "The oracle judges with it when oracle.system is engine and oracle.t0 is unset",
    "oracle": "the t0 the oracle judges with: all (every admissible t0, RSP-QL Theorem 1) or a time; when set it "
              "wins over every engine's t0 and the oracle semantics' t0",
}


def semantics_form(section: DesignerSection, title: str, base: Callable[[], FieldPath],
                   semantics: Callable[[], EngineSemantics], prefix: str) -> SemanticsForm:
    """Every SECRET + R2S parameter of one semantics mapping, two columns; unset = the preset's."""
    box = QGroupBox(title)
    grid = QGridLayout(box)
    s = lambda key: (lambda: (*base(), key))  # noqa: E731

    def preset_label(key: str) -> Callable[[], str]:
        return lambda: f"(preset: {scalar_text(semantics().describe().get(key))})"

    cells: list[tuple[str, QWidget]] = []
    for key, label, tip in SEMANTICS_LABELS:
        combo = section.combo(s(key), SEMANTICS_CHOICES[key], unset=preset_label(key))
        combo.setObjectName(f"{prefix}_{key}")
        combo.setToolTip(tip)
        cells.append((label, combo))
    t0 = section.line(s("t0"), placeholder="preset / all admissible", tooltip=T0_RULES.get(prefix, T0_RULES["semantics"]))
    t0.setObjectName(f"{prefix}_t0")
    cells.append(("t0", t0))
    batch = section.line(s("batch_size"), placeholder="1 (batch tick)")
    batch.setObjectName(f"{prefix}_batch_size")
    cells.append(("Batch size", batch))
    for index, (label, widget) in enumerate(cells):
        row, column = divmod(index, 2)
        grid.addWidget(QLabel(label), row, column * 2)
        grid.addWidget(widget, row, column * 2 + 1)
    report_row = (len(cells) + 1) // 2
    grid.addWidget(QLabel("Report policy"), report_row, 0)
    report = report_boxes(section, s("report"), semantics, prefix)
    grid.addWidget(report.widget, report_row, 1, 1, 3)
    grid.setColumnStretch(1, 1)
    grid.setColumnStretch(3, 1)
    return SemanticsForm(box, report)


def report_boxes(section: DesignerSection, path: Callable[[], FieldPath], semantics: Callable[[], EngineSemantics],
                 prefix: str) -> ReportBoxes:
    """The report policy (CSRBench/SECRET strategies CC, WC, NC, P(period); NE: window close reported at
    the next element) as check boxes."""
    box = QWidget()
    box.setObjectName(f"{prefix}_report")
    box.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    override = QCheckBox("override")
    override.setObjectName(f"{prefix}_report_override")
    row.addWidget(override)
    boxes = {}
    for short, long in STRATEGY_BOXES:
        check = QCheckBox(short)
        check.setToolTip(long)
        check.setObjectName(f"{prefix}_report_{short}")
        boxes[long] = check
        row.addWidget(check)
    period = QLineEdit()
    period.setObjectName(f"{prefix}_report_period")
    period.setPlaceholderText("period, e.g. 5s")
    period.setMaximumWidth(110)
    row.addWidget(period)
    row.addStretch(1)

    def show(value: Any) -> None:
        from rsp_workbench.core.semantics import ReportPolicy

        text = value if isinstance(value, str) else str(semantics().report)
        override.setChecked(value is not MISSING)
        try:
            policy = ReportPolicy.parse(text)
            names = {s.value for s in policy.strategies}
            period.setText(f"{policy.period_ms}ms" if policy.period_ms else "")
            period.setProperty("shown", period.text())
        except UserError:
            names = set()
        for long, check in boxes.items():
            check.setChecked(long in names)
            check.setEnabled(value is not MISSING)
        period.setEnabled(value is not MISSING)

    def commit() -> None:
        if not override.isChecked():
            section.commit(path(), MISSING)
            return
        parts = []
        for long, check in boxes.items():
            if check.isChecked():
                parts.append(f"periodic({period.text().strip() or '1s'})" if long == "periodic" else long)
        section.commit(path(), " & ".join(parts) if parts else "")

    override.clicked.connect(commit)
    for check in boxes.values():
        check.clicked.connect(commit)
    period.editingFinished.connect(lambda: commit() if period.text() != period.property("shown") else None)
    section.bind(box, path, show)
    return ReportBoxes(box, override, boxes, period)
