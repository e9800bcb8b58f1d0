"""Execution: plan the runs of a design, build each run's world, drive the agent, score the wire."""
