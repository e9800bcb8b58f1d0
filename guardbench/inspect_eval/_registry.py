"""The ``inspect_ai`` entry point (pyproject.toml): importing it registers guardbench's Inspect
task."""
from guardbench.inspect_eval.task import cases, guardbench_agent, guardbench_wire

__all__ = ["cases", "guardbench_agent", "guardbench_wire"]
