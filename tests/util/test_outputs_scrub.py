"""Free text written into committed outputs (the mutation report's bench details) carries no machine path."""
from __future__ import annotations

from guardbench.util.outputs import scrub_paths

COPY = "/tmp/gb-mutate-s6yf7_wi/gb-mutate-approval_threshold-r3i3dna6"


def test_a_path_inside_the_copy_becomes_relative():
    line = (f"error: {COPY}/cases/policy_voices.yaml: case pa-rejected-refund-retried-chat: setup in arm "
            "guardrail: reject follows a refund the broker did not hold")
    assert scrub_paths(line, COPY) == ("error: cases/policy_voices.yaml: case pa-rejected-refund-retried-chat: "
                                       "setup in arm guardrail: reject follows a refund the broker did not hold")


def test_any_other_absolute_path_keeps_its_last_two_parts():
    line = 'File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/encoder.py", line 180, in default'
    assert scrub_paths(line) == 'File ".../json/encoder.py", line 180, in default'
    assert "/root" not in scrub_paths("see /root/x/y and /work/main/guardbench/cli/run.py")


def test_urls_and_relative_paths_are_left_alone():
    line = "PATCH https://api-m.sandbox.paypal.com/v1/billing/subscriptions/I-BW452 in tests/mutate/test_x.py"
    assert scrub_paths(line, COPY) == line
    assert scrub_paths("") == ""
