"""outputs.cut_torn_tail: an appended-to file cut back to its last whole line, read from the end
(the sandbox server's record file and a run folder's runs.jsonl both use it before appending)."""
from __future__ import annotations

import os

from guardbench.util.outputs import cut_torn_tail


def _cut(path) -> tuple[int, bytes]:
    fd = os.open(path, os.O_RDWR)
    try:
        return cut_torn_tail(fd), path.read_bytes()
    finally:
        os.close(fd)


def test_a_file_ending_in_a_newline_is_left_as_it_is(tmp_path):
    record = tmp_path / "wire.jsonl"
    record.write_bytes(b'{"a": 1}\n' * 3)
    assert _cut(record) == (0, b'{"a": 1}\n' * 3)


def test_an_empty_file_is_left_as_it_is(tmp_path):
    record = tmp_path / "wire.jsonl"
    record.write_bytes(b"")
    assert _cut(record) == (0, b"")


def test_a_torn_tail_longer_than_one_read_is_cut_back_to_the_last_newline(tmp_path):
    record = tmp_path / "wire.jsonl"
    record.write_bytes(b'{"a": 1}\n' + b"x" * 200_000)
    assert _cut(record) == (200_000, b'{"a": 1}\n')
    record.write_bytes(b"y" * 70_000)                 # no newline at all: nothing whole to keep
    assert _cut(record) == (70_000, b"")


def test_anything_but_a_regular_file_is_left_alone():
    fd = os.open("/dev/null", os.O_RDWR)
    try:
        assert cut_torn_tail(fd) == 0
    finally:
        os.close(fd)
