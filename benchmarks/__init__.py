"""dpax benchmarks: ``python -m benchmarks run --quick|--full`` (see benchmarks/suite.py)."""
