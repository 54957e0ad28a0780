"""The oracle: expected answers for any operational semantics, verdicts, per-window quality."""
