"""guardbench mutate: remove one safeguard at a time and show which evidence notices.

Exit status: 0 every safeguard killed; 1 the harness refused to run or found itself broken
(registry/marker mismatch, unmutated copy failing, canary killed, forced failure not killed,
a module imported from outside the copy); 2 a usage error; 3 the run completed but some
safeguard survived, timed out or gave no valid run.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from guardbench.cli import FORCE_HELP
from guardbench.cli.finite import Finite


def _default_repo() -> Path:
    import guardbench
    here = Path(guardbench.__file__).resolve().parents[1]
    return here if (here / "pyproject.toml").exists() else Path.cwd()


@click.command("mutate")
@click.option("--jobs", type=int, default=None, help="Mutants run at once (default: the "
              "number of cores).")
@click.option("--timeout", type=Finite(), default=120.0, show_default=True,
              help="Wall-clock seconds per mutant; over it the whole process group is killed.")
@click.option("--only", "only", multiple=True, metavar="NAME",
              help="Only this safeguard (repeatable).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for mutation.json and mutation.md (default: a new folder "
              "out/mutate-<time>).")
@click.option("--list", "list_", is_flag=True, help="List the safeguards and exit.")
@click.option("--repo", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Repository to copy (default: the one guardbench is imported from).")
@click.option("--keep", is_flag=True, help="Keep the temporary copies (for debugging).")
@click.option("--quiet", is_flag=True, help="No per-step progress lines (standard error).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def mutate(jobs: int | None, timeout: float, only: tuple[str, ...], out: Path | None, list_: bool,
           repo: Path | None,
           keep: bool, quiet: bool, force: bool) -> None:
    """Remove one safeguard at a time and show which evidence notices."""
    from guardbench.errors import GuardbenchError
    from guardbench.mutate import registry as reg

    if list_:
        import textwrap
        for s in reg.ALL:                    # every line within 100 columns
            tag = f" [control: must {s.control}]" if s.control else ""
            click.echo(s.name + tag)
            click.echo("\n".join(textwrap.wrap(f"{s.path}: {s.prevents}", 100,
                                               initial_indent="    ",
                                               subsequent_indent="      ", break_on_hyphens=False)))
            # a test id too long for one line: its name under its file
            for t in s.tests:
                click.echo(f"    {t}" if len(t) <= 96 else "    "
                           + t.replace("::", "\n      ::", 1))
        click.echo(f"{len(reg.SAFEGUARDS)} safeguards, {len(reg.CONTROLS)} controls")
        return
    jobs = jobs if jobs is not None else (os.cpu_count() or 2)
    if jobs < 1:
        raise GuardbenchError("--jobs", "must be at least 1")
    if timeout <= 0:
        raise GuardbenchError("--timeout", "must be positive")
    for name in only:
        if name not in reg.BY_NAME or reg.BY_NAME[name].control:
            raise GuardbenchError("--only", f"no safeguard named {name!r} (guardbench mutate "
                                  "--list shows them)")

    from guardbench.util.extras import require
    from guardbench.util.outputs import check_out_dir, default_out, refuse_overwrite
    if out is not None:
        refuse_overwrite(out, "--out", force=force, writes=("mutation.json", "mutation.md"))
    require("test", what="mutate")
    out = check_out_dir(out if out is not None else default_out("mutate"))
    from guardbench.mutate.copies import HarnessBroken
    from guardbench.mutate.harness import run
    from guardbench.mutate.report import terminal, write
    from guardbench.util.progress import ticker
    # a step's line on stderr (over the bar on a terminal), none when quiet
    echo = ticker(quiet).line
    try:
        report = run(repo or _default_repo(), list(only) or None, jobs=jobs,
                     timeout=timeout, out=out,
                     keep=keep, echo=echo)
    except HarnessBroken as exc:
        click.echo(f"harness broken, nothing counted: {exc}", err=True)
        sys.exit(1)
    paths = write(report, out)
    click.echo(terminal(report))
    click.echo(f"written: {', '.join(str(p) for p in paths)}", err=True)
    sys.exit(0 if report.all_killed else 3)
