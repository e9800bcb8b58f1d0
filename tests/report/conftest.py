"""Fixtures shared by the run explorer's tests: one small real run and its report, made once per session."""
from __future__ import annotations

import explorer_support as S
import pytest


@pytest.fixture(scope="session")
def explorer_run(tmp_path_factory):
    """(run folder, report.html) of a small real run: 9 cases x 2 variants x 4 arms, scored from its wire."""
    base = tmp_path_factory.mktemp("explorer")
    run = S.real_run(base / "run")
    return run, S.report(run, base / "report")
