"""Regenerate a screenshot of each view into docs/ (offscreen): ``python docs/screenshots.py``.

Writes docs/gui-library.png, gui-designer.png, gui-designer-invalid.png, gui-designer-stream.png,
gui-teaching.png, gui-teaching-coupon.png and gui-timeline.png. No Spark is started.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["RSPWB_NO_SPARK_WARMUP"] = "1"
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DOCS = ROOT / "docs"
SAMPLE = ROOT / "tests" / "data" / "experiments" / "full.yaml"


def main() -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    import workbench.gui.qt  # noqa: F401
    from workbench.gui.main_window import MainWindow
    from workbench.gui.timeline import synthetic_lanes

    with tempfile.TemporaryDirectory() as tmp:
        settings = QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        samples = ROOT / "sample_experiments"
        if not any(samples.glob("**/*.yaml")):
            samples = SAMPLE.parent
        window = MainWindow(settings=settings, samples_dir=samples, spark_warmup=False)
        window.resize(1400, 900)
        window.show()

        def shot(name: str) -> None:
            for _ in range(3):
                app.processEvents()
            path = DOCS / name
            window.grab().save(str(path))
            print(path)

        window.library.select_path(str(samples / "full.yaml") if (samples / "full.yaml").exists() else "")
        window.tabs.setCurrentWidget(window.library)
        shot("gui-library.png")

        window.open_experiment(str(SAMPLE))
        window.designer.sections.setCurrentIndex(3)
        shot("gui-designer.png")
        window.designer.sections.setCurrentIndex(1)
        shot("gui-designer-stream.png")
        window.designer.model.set(("engines", 1, "semantics", "report"), "windowclose")
        window.designer.engine_index = 1
        window.designer.sections.setCurrentIndex(3)
        window.designer.refresh(update_yaml=True)
        shot("gui-designer-invalid.png")
        window.designer.model.undo()
        window.designer.model._saved_raw = window.designer.model.raw

        window.tabs.setCurrentWidget(window.teaching)
        window.teaching.model.set_example("rooms")
        window.teaching.model.set_time(10_000)
        shot("gui-teaching.png")
        window.teaching.model.set_example("coupon")
        window.teaching.model.override(3, border="open-closed", empty_notification=False)
        window.teaching.model.set_time(8_000)
        shot("gui-teaching-coupon.png")

        window.tabs.setCurrentWidget(window.results)
        results = window.results
        results.size_edit.setText("10s")
        results.slide_edit.setText("5s")
        results.show_lanes(synthetic_lanes(2_000_000, stations=12, interval_ms=100), "synthetic 2M")
        timeline = results.timeline
        timeline.add_engine_emissions("cqels-like", range(10_120, 2_000_000, 5_000))
        timeline.set_reconstructed_borders("cqels-like", [(o + 100, o + 10_100) for o in range(0, 2_000_000, 5_000)], (100, 100))
        timeline.set_time_range(18_000, 52_000)
        timeline.refresh()
        window_ = timeline.select_at(33_000, timeline._window_row_y(5))
        if window_ is not None:
            a, b, c = (frozenset({("station", f"<http://ex.org/A{i}>")}) for i in range(3))
            timeline.set_window_bindings({(window_.open, window_.close): (Counter({a: 1, b: 1}), Counter({a: 1, c: 1}))})
        shot("gui-timeline.png")
        timeline.set_time_range(0, 2_000_000 * 100 // 12)
        timeline.refresh()
        shot("gui-timeline-overview.png")
        window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
