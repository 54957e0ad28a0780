"""Domain core: RSP semantics (time, windows, SECRET report/tick, R2S, t0). No Qt, no Spark."""
