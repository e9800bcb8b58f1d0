"""guardbench defences: list the defences installed (built in and plug-ins)."""
from __future__ import annotations

import click


@click.command("defences")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def defences(as_json: bool) -> None:
    """List the defences installed: name, source package, one-line promise.

    Third-party packages add defences through the ``guardbench.defences`` entry-point group;
    each installed defence is also an arm of the same name for ``guardbench run --arms``.
    """
    import json

    from guardbench.registry import listing
    rows = listing()
    if as_json:
        click.echo(json.dumps([{"name": r.name, "source": r.source,
                                "promise": r.promise, "arm": r.arm}
                               for r in rows], indent=2))
        return
    w_name = max([len("name")] + [len(r.name) for r in rows])
    w_src = max([len("source")] + [len(r.source) for r in rows])
    click.echo(f"{'name'.ljust(w_name)}  {'source'.ljust(w_src)}  promise")
    click.echo(f"{'-' * w_name}  {'-' * w_src}  {'-' * 7}")
    import textwrap
    left = w_name + w_src + 4                # the promise wraps within 100 columns, under itself
    for r in rows:
        lines = textwrap.wrap(r.promise, max(30, 100 - left), break_on_hyphens=False) or [""]
        click.echo(f"{r.name.ljust(w_name)}  {r.source.ljust(w_src)}  {lines[0]}")
        for more in lines[1:]:
            click.echo(" " * left + more)
