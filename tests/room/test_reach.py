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
from guardbench.room.reach import masked, out_of_reach, unreachable


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


def test_a_venv_python_that_links_into_a_closed_folder_is_named_by_its_target(base):
    closed, venv = base / "interpreters", base / "venv" / "bin"
    closed.mkdir()
    venv.mkdir(parents=True)
    (closed / "python3").write_text("")
    (closed / "python3").chmod(0o755)
    closed.chmod(0o700)
    (venv / "python").symlink_to(closed / "python3")          # as `python -m venv` makes it
    assert out_of_reach(venv / "python") is None                # the link's own way is open...
    why = unreachable(str(venv / "python"))                     # ...the interpreter behind it is not
    assert why is not None and repr(str(closed)) in why and "chmod o+rx" in why


def test_a_path_in_the_masked_home_is_named_unless_the_room_exposes_it(base):
    home, elsewhere = base / "home", base / "opt"
    (home / ".pyenv" / "bin").mkdir(parents=True)
    (home / "venv").mkdir()
    elsewhere.mkdir()
    (home / "venv" / "python").symlink_to(home / ".pyenv" / "bin")
    (base / "link").symlink_to(home / "venv")
    assert masked(elsewhere, home=str(home), exposed=()) is None
    assert masked(base / "link", home=str(home), exposed=()) == str(home)      # the link followed into home
    assert masked(home / "venv" / "python", home=str(home), exposed=(str(home / ".pyenv"),)) is None
    assert masked(home / "venv", home=str(home), exposed=(str(home / ".pyenv"),)) == str(home)
    assert masked(base / "homely", home=str(home), exposed=()) is None           # a sibling with the same prefix
    assert masked(home, home="/", exposed=()) is None                            # nothing is masked


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
