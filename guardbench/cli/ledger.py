"""guardbench ledger verify FILE: verify the whole hash chain, name the first broken entry, and
check that the ledger reaches the head recorded beside it (and in the operator's copy)."""
from __future__ import annotations

import sys

import click


@click.group("ledger")
def ledger() -> None:
    """Verify a hash-chained ledger and name the first broken entry."""


@ledger.command("verify")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--head-copy", type=click.Path(dir_okay=False), default=None,
              help="The second head location (default: the one in "
              "$GUARDBENCH_LEDGER_HEAD_DIR, if set).")
def verify(file: str, head_copy: str | None) -> None:
    """Exit 0 when intact and reaching its head, 1 when broken or short of its head (naming the line
    or the head and why), 2 when unreadable."""
    from guardbench.broker.ledger import KEY_ENV, verify_file

    report = verify_file(file, head_copy=head_copy)
    sig = "signatures verified" if report.signed else f"signatures not checked ({KEY_ENV} not set)"
    if report.line is not None:
        click.echo(f"ledger {file}: broken at line {report.line} (entry seq {report.line - 1}): "
                   f"{report.reason}; "
                   f"{report.entries} entries before it intact; {sig}")
        sys.exit(1)
    if report.head_problem is not None:
        click.echo(f"ledger {file}: {report.entries} entries, chain intact, but it does not "
                   "reach its head: "
                   f"{report.head_problem}; {sig}")
        sys.exit(1)
    if report.head is None:
        head = "no head (empty ledger)"
    elif report.head == report.entries:
        head = f"head records all {report.entries} entries"
    else:
        head = (f"head records {report.head} of {report.entries} entries (the newest were "
                "written after "
                f"the last head: a broker stopped between the two writes)")
    click.echo(f"ledger {file}: {report.entries} entries, chain intact; {head}; {sig}")
