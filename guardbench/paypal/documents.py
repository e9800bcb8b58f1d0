"""Locate and verify PayPal's pinned OpenAPI documents (the lock, the folder, the hashes).

The pin lives in ``specs/paypal.lock.json`` at the repository root: the upstream
repository, the commit, and for each document its path (``openapi/<file>``) and
sha256. The documents themselves are never copied into this repository; they are
read from one folder, chosen in this order:

1. an explicit folder (``--specs-dir``),
2. the environment variable ``GUARDBENCH_SPECS_DIR``,
3. ``../shared/specs/paypal`` beside the repository checkout, if it exists,
4. the download cache, ``$XDG_CACHE_HOME/guardbench/specs/<commit>/`` (by default
   ``~/.cache/guardbench/specs/<commit>/``), filled by ``guardbench specs fetch``.

Every document is hashed before use, wherever it came from; a missing or altered
file raises :class:`guardbench.errors.SpecError` naming the file and both hashes.
The stand-in (paypal/) reads its schemas from here; conformance/ adds fetching.
Standard library only.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from guardbench.errors import SpecError

ENV_SPECS_DIR = "GUARDBENCH_SPECS_DIR"
ENV_BASE_URL = "GUARDBENCH_SPECS_BASE_URL"
"""Overrides the folder URL the documents are downloaded from: each file is fetched
from ``<base>/<file name>`` (default: raw.githubusercontent.com at the pinned commit)."""


def repo_root() -> Path:
    """The checkout this package runs from (guardbench is installed editable)."""
    return Path(__file__).resolve().parents[2]


def lock_path() -> Path:
    return repo_root() / "specs" / "paypal.lock.json"


def shared_specs_dir() -> Path:
    """The offline copy next to the checkout: ``<repo>/../shared/specs/paypal``."""
    return repo_root().parent / "shared" / "specs" / "paypal"


@dataclass(frozen=True)
class LockedFile:
    name: str      # document name, e.g. "checkout_orders_v2"
    path: str      # path inside the upstream repository, e.g. "openapi/checkout_orders_v2.json"
    sha256: str

    @property
    def filename(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Lock:
    repository: str
    commit: str
    url_template: str
    files: tuple[LockedFile, ...]

    def file(self, name: str) -> LockedFile:
        for f in self.files:
            if f.name == name:
                return f
        raise SpecError("specs", f"no document named {name!r} in {lock_path()} "
                                 f"(known: {', '.join(self.names)})")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.files)

    def url(self, f: LockedFile, base_url: str | None = None) -> str:
        if base_url:
            return base_url.rstrip("/") + "/" + f.filename
        return self.url_template.format(commit=self.commit, path=f.path)


@lru_cache(maxsize=4)
def _read_lock(path: str) -> Lock:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        files = tuple(LockedFile(f["name"], f["path"], f["sha256"].lower()) for f in data["files"])
        return Lock(data["repository"], data["commit"], data["url_template"], files)
    except FileNotFoundError:
        raise SpecError(str(p), "lock file not found") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise SpecError(str(p), f"malformed lock file: {exc}") from None


def load_lock(path: str | Path | None = None) -> Lock:
    return _read_lock(str(path or lock_path()))


def cache_dir(commit: str | None = None) -> Path:
    """Default download cache for the pinned commit."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "guardbench" / "specs" / (commit or load_lock().commit)


def resolve_specs_dir(explicit: str | Path | None = None) -> tuple[Path, str]:
    """The folder to read documents from and why it was chosen: (path, source).

    source is one of "option", "env", "shared", "cache". An explicit folder or the
    environment variable is used even if it does not exist (verification then names
    the missing files), so a typo is never silently replaced by another copy.
    """
    if explicit:
        return Path(explicit).expanduser(), "option"
    env = os.environ.get(ENV_SPECS_DIR)
    if env:
        return Path(env).expanduser(), "env"
    shared = shared_specs_dir()
    if shared.is_dir():
        return shared, "shared"
    return cache_dir(), "cache"


def how_to_get() -> str:
    """The one line that tells a user how to give guardbench the documents."""
    return (f"PayPal's pinned OpenAPI documents are needed: set {ENV_SPECS_DIR} to a folder "
            "holding them "
            "(e.g. ../shared/specs/paypal) or run `guardbench specs fetch`")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_verified(specs_dir: str | Path, name: str, lock: Lock | None = None) -> bytes:
    """The bytes of one document, after checking them against the lock.

    Reads once and hashes what it read, so what is parsed is what was verified.
    """
    lock = lock or load_lock()
    f = lock.file(name)
    p = Path(specs_dir) / f.filename
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise SpecError(str(p),
                        f"missing (expected sha256 {f.sha256[:16]}...): {how_to_get()}") from None
    except OSError as exc:
        raise SpecError(str(p), f"unreadable: {exc.strerror or exc}") from None
    actual = sha256_bytes(data)
    if actual != f.sha256:
        raise SpecError(str(p), f"sha256 mismatch: expected {f.sha256}, got {actual}")
    return data
