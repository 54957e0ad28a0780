"""The experiment designer: one form per section of the experiment file, a YAML pane in sync
both ways, undo/redo — all over the shared, Qt-free :class:`~rsp_workbench.gui.designer.model.DesignerModel`.

The model and its Qt-free helpers: ``model`` (the document, validation, undo/redo, save),
``yaml_edits`` (a form edit carried into the YAML text in place, comments kept),
``save_as_paths`` (the path fields rewritten when "Save as" moves the file),
``window_clauses`` (the window clauses of a query template found in its text, so that a form
edits size and slide), ``stream_edits`` (one ``stream:`` or named ``streams:``, edited as a whole).

The views are named after the file's sections (docs/experiment-format.md): ``general``
(name, seed, repetitions, sizes; variables, sweep, cases), ``streams``, ``queries``,
``engines`` (with ``semantics``, shared with the oracle), ``static``, ``oracle`` (kpis,
oracle, stand, spark), ``yaml_pane``; ``view`` lays them out; ``fields`` is the binding kit
every section is built from.
"""
