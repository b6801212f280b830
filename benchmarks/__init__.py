"""Benchmarks: EvoTrainer against other prompt optimisers at equal LLM-call budget (quality.py)
and against the machine's limit (efficiency.py). Scripts, not tests: `make bench` runs them;
tests/test_benchmarks.py runs each once at a tiny budget with fake LLMs so they cannot rot."""
