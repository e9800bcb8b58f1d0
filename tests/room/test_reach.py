"""What the room's user (uid 65534) can reach: checked before any run, one line naming the path."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.room import unavailable
from guardbench.room.reach import out_of_reach


@pytest.fixture
def base():
    folder = Path(tempfile.mkdtemp(prefix="gb-reach-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_closed_folder_on_the_way_or_an_unreadable_file_is_named(base):
    closed, open_ = base / "closed", base / "open"
    (closed / "deep").mkdir(parents=True)
    open_.mkdir()
    (closed / "deep" / "app.py").write_text("")
    (open_ / "app.py").write_text("")
    (open_ / "secret.py").write_text("")
    closed.chmod(0o700)
    (open_ / "app.py").chmod(0o644)
    (open_ / "secret.py").chmod(0o600)
    assert out_of_reach(closed / "deep" / "app.py") == str(closed)
    assert out_of_reach(open_ / "app.py") is None
    assert out_of_reach(open_ / "secret.py") == str(open_ / "secret.py")
    assert out_of_reach(base / "missing") is None                   # nothing to say: another check's
    assert out_of_reach(open_ / "secret.py", user=os.stat(open_ / "secret.py").st_uid) is None   # its owner may


@pytest.mark.skipif(os.geteuid() != 0 or bool(unavailable()), reason="rooms run as uid 65534 only when made by root")
def test_an_application_the_room_user_cannot_read_is_refused_before_any_run(base, tmp_path):
    app = tmp_path / "app.py"                        # pytest's own folder: root's alone
    app.write_text("print('{}')\n")
    spec = base / "app.yaml"
    spec.write_text(f"name: unreachable\nagent:\n  command: \"{{python}}\"\n  args: [\"{app}\"]\nreach: proxy\n")
    out = base / "run"
    res = CliRunner().invoke(cli, ["run", "--arms", f"app:{spec}", "--case", "benign-charge-plan", "--variants",
                                   "1", "--quiet", "--out", str(out)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert "agent.args" in res.output and "uid 65534" in res.output and "--room off" in res.output
    assert not (out / "runs.jsonl").exists()
    res = CliRunner().invoke(cli, ["run", "--arms", f"app:{spec}", "--case", "benign-charge-plan", "--variants",
                                   "1", "--room", "off", "--out", str(out)])
    assert res.exit_code == 0, res.output                # uncontained, it runs as we do
