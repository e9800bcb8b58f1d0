"""A pytest plugin the harness loads in every copy (``-p guardbench.mutate.probe``).

At the end of the session it writes, to the file named by $GUARDBENCH_MUTATE_PROBE, where
each imported guardbench module came from, so the harness can refuse a run whose tests
imported an installed tree instead of the mutated copy.
"""
from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

ENV = "GUARDBENCH_MUTATE_PROBE"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    mods = {name: getattr(mod, "__file__", None) for name, mod in list(sys.modules.items())
            if name == "guardbench" or name.startswith("guardbench.")}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"modules": mods, "rootdir": str(session.config.rootpath)}, fh)
