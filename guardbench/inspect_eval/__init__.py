"""guardbench for Inspect AI users (the [inspect] extra): the corpus as an Inspect task.

task.py: ``inspect eval guardbench/cases`` (samples, the solver, the wire scorer); provider.py:
Inspect's model API behind guardbench's LLM agent loop. Nothing else in guardbench imports these,
and these are the only modules that import inspect_ai.
"""
