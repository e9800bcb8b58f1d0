"""Fetch and verify PayPal's pinned OpenAPI documents: the lock, the folder order and the hash
checks are guardbench/paypal/documents.py's (re-exported here); this module adds `specs fetch`.

Nothing here imports openapi-core; httpx is imported only by :func:`fetch`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from guardbench.errors import SpecError
from guardbench.paypal.documents import (  # noqa: F401  (re-exported: the lock, the folder, the hashes)
    ENV_BASE_URL,
    ENV_SPECS_DIR,
    Lock,
    LockedFile,
    cache_dir,
    how_to_get,
    load_lock,
    lock_path,
    read_verified,
    repo_root,
    resolve_specs_dir,
    sha256_bytes,
    shared_specs_dir,
)

# told of each locked file: (the file, "cached" / "fetched" / "copied", where from)
Progress = Callable[[LockedFile, str, str], object]


def verify_dir(specs_dir: str | Path, names: list[str] | tuple[str,
                                                               ...] | None = None) -> dict[str,
                                                                                           str]:
    """Check every (or the named) document in a folder; {name: sha256}. Raises SpecError."""
    lock = load_lock()
    out = {}
    for name in names or lock.names:
        read_verified(specs_dir, name, lock)
        out[name] = lock.file(name).sha256
    return out


def fetch(dest: str | Path | None = None, base_url: str | None = None, timeout: float = 20.0,
          progress: Progress | None = None, source: str | Path | None = None) -> Path:
    """Download every locked document into ``dest`` (default: the cache) and verify it.

    Files already present with the right hash are kept. A download whose hash does
    not match is not written. Any network failure raises SpecError naming the URL.
    ``source`` (or a ``file://`` base URL) is a local mirror folder: its files are copied,
    verified the same way.
    """
    lock = load_lock()
    dest = Path(dest).expanduser() if dest else cache_dir(lock.commit)
    base_url = base_url or os.environ.get(ENV_BASE_URL) or None
    if source is None and base_url and base_url.startswith("file://"):
        from urllib.parse import unquote, urlsplit
        source = unquote(urlsplit(base_url).path)
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SpecError(str(dest), f"cannot create cache folder: {exc.strerror or exc}") from None
    if source is not None:
        return _copy_from(Path(source).expanduser(), dest, lock, progress)
    import httpx
    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        for f in lock.files:
            target = dest / f.filename
            if target.is_file() and sha256_bytes(target.read_bytes()) == f.sha256:
                if progress:
                    progress(f, "cached", str(target))
                continue
            url = lock.url(f, base_url)
            try:
                resp = client.get(url)
            except httpx.HTTPError as exc:
                why = f"{type(exc).__name__}: {exc or 'no detail'}"
                raise SpecError("specs fetch", f"cannot download {url}: {why}") from None
            if resp.status_code != 200:
                raise SpecError("specs fetch", f"cannot download {url}: HTTP {resp.status_code}")
            actual = sha256_bytes(resp.content)
            if actual != f.sha256:
                raise SpecError(url, f"sha256 mismatch: expected {f.sha256}, got {actual}")
            tmp = target.with_name(target.name + ".part")
            tmp.write_bytes(resp.content)
            os.replace(tmp, target)
            if progress:
                progress(f, "fetched", url)
    return dest


def _copy_from(source: Path, dest: Path, lock: Lock, progress: Progress | None) -> Path:
    """The locked documents copied from a local mirror folder, each verified before it is
    written."""
    if not source.is_dir():
        raise SpecError(str(source), "not a folder (specs fetch --from needs a folder holding "
                        "the documents)")
    for f in lock.files:
        target, origin = dest / f.filename, source / f.filename
        if target.is_file() and sha256_bytes(target.read_bytes()) == f.sha256:
            if progress:
                progress(f, "cached", str(target))
            continue
        try:
            data = origin.read_bytes()
        except OSError as exc:
            raise SpecError(str(origin), f"cannot read: {exc.strerror or exc}") from None
        actual = sha256_bytes(data)
        if actual != f.sha256:
            raise SpecError(str(origin), f"sha256 mismatch: expected {f.sha256}, got {actual}")
        tmp = target.with_name(target.name + ".part")
        tmp.write_bytes(data)
        os.replace(tmp, target)
        if progress:
            progress(f, "copied", str(origin))
    return dest
