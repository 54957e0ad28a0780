"""The experiment designer: one form per section of the experiment file, a YAML pane in sync
both ways, undo/redo — all over the shared, Qt-free
:class:`~rsp_workbench.gui.designer_model.DesignerModel`.

Modules are named after the file's sections (docs/experiment-format.md): ``general``
(name, seed, repetitions, sizes; variables, sweep, cases), ``streams``, ``queries``,
``engines`` (with ``semantics``, shared with the oracle), ``static``, ``oracle`` (kpis,
oracle, stand, spark), ``yaml_pane``; ``view`` lays them out; ``fields`` is the binding kit
every section is built from.
"""

from rsp_workbench.gui.designer.view import DesignerView

__all__ = ["DesignerView"]
