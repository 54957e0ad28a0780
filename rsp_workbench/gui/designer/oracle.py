"""How runs are measured and judged: ``kpis`` (what the probe collects, sampling period),
``oracle`` (``system``, ``match``, ``gracious``, ``t0``, ``end``, ``regroup``, ``semantics`` overrides), ``stand``
(``mode``, ``time_scale``, ``timeout``, ``batch``) and ``spark`` (``master``).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QLineEdit, QVBoxLayout, QWidget

from rsp_workbench.core.semantics import PRESETS, EngineSemantics
from rsp_workbench.experiment.model import KPI_NAMES, ORACLE_MATCHES, STAND_MODES
from rsp_workbench.experiment.spark_master import MASTER_ENV
from rsp_workbench.gui.designer.fields import DesignerSection, grid_of, yaml_value
from rsp_workbench.gui.designer.semantics import T0_RULES, semantics_form
from rsp_workbench.gui.designer.model import MISSING, DesignerModel, parse_scalar


class OracleSection(DesignerSection):
    """KPIs, the oracle, the test stand and Spark."""

    def __init__(self, model: DesignerModel, parent: QWidget | None = None) -> None:
        super().__init__(model, parent)
        self._sampling_shown = ""
        layout = QVBoxLayout(self)
        kpis = QGroupBox("KPIs (Heaven's K)")
        kpis.setObjectName("kpisBox")
        kpi_layout = QVBoxLayout(kpis)
        self.kpi_boxes: dict[str, QCheckBox] = {}
        for name in KPI_NAMES:
            box = QCheckBox(name)
            box.setObjectName(f"kpi_{name}")
            box.clicked.connect(self._on_kpi_clicked)
            self.kpi_boxes[name] = box
        self.bind(kpis, lambda: ("kpis", "collect"), self._show_kpis)
        kpi_layout.addLayout(grid_of(list(self.kpi_boxes.values()), 4))
        sampling_form = QFormLayout()
        self.sampling_edit = QLineEdit()
        self.sampling_edit.setObjectName("kpiSampling")
        self.sampling_edit.setPlaceholderText("500ms")
        self.sampling_edit.editingFinished.connect(self._on_sampling_edited)
        self.bind(self.sampling_edit, lambda: ("kpis", "sampling"), self._show_sampling)
        sampling_form.addRow("Sampling period", self.sampling_edit)
        kpi_layout.addLayout(sampling_form)
        layout.addWidget(kpis)

        oracle = QGroupBox("Oracle (expected answers)")
        oracle_layout = QVBoxLayout(oracle)
        oracle_form = QFormLayout()
        self.oracle_system_combo = self.combo(lambda: ("oracle", "system"), ("engine", *PRESETS),
                                               unset=lambda: "(engine: each engine's own semantics)")
        self.oracle_system_combo.setObjectName("oracle_system")
        oracle_form.addRow("System", self.oracle_system_combo)
        match = self.combo(lambda: ("oracle", "match"), ORACLE_MATCHES, unset=lambda: "(strict)")
        match.setObjectName("oracle_match")
        match.setToolTip("strict: equal answers; csrbench: the engine's answers contained in the oracle's")
        oracle_form.addRow("Match", match)
        gracious = self.check(lambda: ("oracle", "gracious"), "gracious (reconstruct the engine's borders)")
        gracious.setObjectName("oracle_gracious")
        oracle_form.addRow("", gracious)
        t0 = self.line(lambda: ("oracle", "t0"), placeholder="all (every admissible t0, RSP-QL Theorem 1)",
                       tooltip=T0_RULES["oracle"])
        t0.setObjectName("oracle_t0")
        oracle_form.addRow("t0", t0)
        end = self.line(lambda: ("oracle", "end"), placeholder="after-last-window (last element + largest window)",
                        tooltip="the last instant judged and the stand's final advance: after-last-window, "
                                "last-element or a time, e.g. 30s")
        end.setObjectName("oracle_end")
        oracle_form.addRow("End", end)
        regroup = self.check(lambda: ("oracle", "regroup"), "regroup (engines answer one response per binding)")
        regroup.setObjectName("oracle_regroup")
        oracle_form.addRow("", regroup)
        oracle_layout.addLayout(oracle_form)
        oracle_layout.addWidget(semantics_form(self, "Semantics overrides of the system's preset",
                                               lambda: ("oracle", "semantics"), self._oracle_semantics,
                                               "oracle_semantics").box)
        layout.addWidget(oracle)

        stand = QGroupBox("Test stand and Spark")
        stand_form = QFormLayout(stand)
        mode = self.combo(lambda: ("stand", "mode"), STAND_MODES, unset=lambda: "(real-time)")
        mode.setObjectName("stand_mode")
        mode.setToolTip("real-time: stimuli at their application times; absolute-time: the next one when the engine is done")
        stand_form.addRow("Mode", mode)
        scale = self.line(lambda: ("stand", "time_scale"), placeholder="1.0", tooltip="> 1 plays the stream faster")
        scale.setObjectName("stand_time_scale")
        stand_form.addRow("Time scale", scale)
        timeout = self.line(lambda: ("stand", "timeout"), placeholder="none", tooltip="a duration, e.g. 60s")
        timeout.setObjectName("stand_timeout")
        stand_form.addRow("Timeout", timeout)
        batch = self.line(lambda: ("stand", "batch"), placeholder="256 (1 = one stimulus per message)",
                          tooltip="the most stimuli per message to an engine that accepts batches, 1–1024")
        batch.setObjectName("stand_batch")
        stand_form.addRow("Stimuli per message", batch)
        max_output = self.line(lambda: ("stand", "max_output_mb"), placeholder="1024",
                               tooltip="MiB the engine may write on stdout in one run; more fails the run")
        max_output.setObjectName("stand_max_output_mb")
        stand_form.addRow("Engine output (MiB)", max_output)
        master = self.line(lambda: ("spark", "master"), text=True,
                            placeholder=f"${MASTER_ENV}, else the settings' spark.master, else local[*]",
                            tooltip="where this experiment's Spark jobs run, e.g. spark://host:7077; "
                                    f"empty: the environment variable {MASTER_ENV} wins over the settings file")
        master.setObjectName("spark_master")
        stand_form.addRow("Spark master", master)
        layout.addWidget(stand)
        layout.addStretch(1)

    def _oracle_semantics(self) -> EngineSemantics:
        system = self.model.get(("oracle", "system"))
        return PRESETS.get(system, EngineSemantics()) if isinstance(system, str) else EngineSemantics()


    def _show_kpis(self, value: Any) -> None:
        raw = self.model.get(("kpis",))
        chosen = value if isinstance(value, list) else (raw if isinstance(raw, list) else list(KPI_NAMES))
        for name, box in self.kpi_boxes.items():
            box.setChecked(name in chosen)

    def _show_sampling(self, value: Any) -> None:
        self._sampling_shown = yaml_value(value)
        self.sampling_edit.setText(self._sampling_shown)


    @Slot()
    def _on_kpi_clicked(self) -> None:
        chosen = [name for name, box in self.kpi_boxes.items() if box.isChecked()]
        raw = self.model.get(("kpis",))
        sampling = raw.get("sampling", MISSING) if isinstance(raw, dict) else MISSING
        if sampling is MISSING and chosen == list(KPI_NAMES):
            self.commit(("kpis",), MISSING)
        else:
            value: dict[str, Any] = {"collect": chosen}
            if sampling is not MISSING:
                value["sampling"] = sampling
            self.commit(("kpis",), value)

    @Slot()
    def _on_sampling_edited(self) -> None:
        if self.sampling_edit.text() == self._sampling_shown:
            return
        self._sampling_shown = self.sampling_edit.text()
        raw = self.model.get(("kpis",))
        chosen = raw if isinstance(raw, list) else (raw.get("collect", list(KPI_NAMES)) if isinstance(raw, dict) else list(KPI_NAMES))
        value = parse_scalar(self.sampling_edit.text())
        new: dict[str, Any] = {"collect": chosen}
        if value is not MISSING:
            new["sampling"] = value
        self.commit(("kpis",), new)
