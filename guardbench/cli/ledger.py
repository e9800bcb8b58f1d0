"""guardbench ledger verify FILE: verify the whole hash chain and name the first broken entry."""
from __future__ import annotations

import sys

import click


@click.group("ledger")
def ledger():
    """Verify a hash-chained ledger and name the first broken entry."""


@ledger.command("verify")
@click.argument("file", type=click.Path(dir_okay=False))
def verify(file):
    """Exit 0 when intact, 1 when broken (naming the line and why), 2 when unreadable."""
    from guardbench.broker.ledger import KEY_ENV, verify_file

    report = verify_file(file)
    sig = "signatures verified" if report.signed else f"signatures not checked ({KEY_ENV} not set)"
    if report.ok:
        click.echo(f"ledger {file}: {report.entries} entries, chain intact; {sig}")
        return
    click.echo(f"ledger {file}: broken at line {report.line} (entry seq {report.line - 1}): {report.reason}; "
               f"{report.entries} entries before it intact; {sig}")
    sys.exit(1)
