"""`guardbench specs`: fetch and verify PayPal's pinned OpenAPI documents.

Imports nothing heavy: httpx only inside `fetch`, openapi-core never.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

from guardbench.cli.finite import Finite
from guardbench.conformance import specs as _specs

if TYPE_CHECKING:
    from guardbench.paypal.documents import LockedFile


@click.group("specs")
def specs() -> None:
    """Fetch and verify PayPal's pinned OpenAPI documents (specs/paypal.lock.json)."""


@specs.command("fetch")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None,
              help="Where to put the documents (default: ~/.cache/guardbench/specs/<commit>/).")
@click.option("--base-url", default=None, envvar=_specs.ENV_BASE_URL, show_envvar=True,
              help="Folder URL to download <file> from (default: raw.githubusercontent.com at the "
                   "pinned commit).")
@click.option("--timeout", type=Finite(0, min_open=True), default=20.0, show_default=True,
              help="Seconds per download.")
@click.option("--from", "source", type=click.Path(path_type=str), default=None,
              help="Copy from a local mirror folder instead of downloading (also: --base-url "
              "file:///DIR).")
def fetch(cache_dir: str | None, base_url: str | None, timeout: float, source: str | None) -> None:
    """Download the six locked documents (or copy them from a folder) and verify every sha256."""
    from guardbench.util.extras import require
    if source is None and not (base_url or "").startswith("file://"):
        require("conformance", "httpx", what="specs fetch")
    lock = _specs.load_lock()

    def progress(f: LockedFile, what: str, where: str) -> None:
        click.echo(f"{what:8s} {f.filename}  sha256 {f.sha256[:16]}…  ({where})")

    dest = _specs.fetch(cache_dir, base_url=base_url, timeout=timeout,
                        progress=progress, source=source)
    click.echo(f"{len(lock.files)} documents at {lock.commit[:12]} verified in {dest}")


@specs.command("verify")
@click.option("--specs-dir", type=click.Path(file_okay=False), default=None,
              help=f"Folder holding the documents (default: ${_specs.ENV_SPECS_DIR}, "
                   "../shared/specs/paypal, then the cache).")
def verify(specs_dir: str | None) -> None:
    """Check the documents in the folder guardbench would use against the lock."""
    folder, source = _specs.resolve_specs_dir(specs_dir)
    hashes = _specs.verify_dir(folder)
    for name, sha in hashes.items():
        click.echo(f"ok  {name}.json  {sha}")
    click.echo(f"{len(hashes)} documents verified in {folder} ({source})")


@specs.command("path")
@click.option("--specs-dir", type=click.Path(file_okay=False), default=None)
def path(specs_dir: str | None) -> None:
    """Print the folder guardbench reads the documents from, and why."""
    folder, source = _specs.resolve_specs_dir(specs_dir)
    click.echo(f"{folder}\t{source}")
