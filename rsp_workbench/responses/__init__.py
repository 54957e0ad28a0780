"""Engine outputs (CSRBench answer JSON, YABench QR_ files) in one response model."""
