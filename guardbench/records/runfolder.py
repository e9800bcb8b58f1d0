"""Writing a run folder: one writer at a time, an atomic manifest, records appended and never
rewritten.

A run folder holds ``manifest.json`` (version, commit, hashes of cases and policy, the options that
define the run's design) and ``runs.jsonl`` (one line per run, appended and flushed as each
finishes). :class:`RunFolderWriter` is the only thing that writes them:

* it holds an exclusive lock on the folder (``flock`` on the folder itself: no lock file is left
  behind) for as long as it is open; a second writer is refused with a one-line error, so two runs
  on one ``--out`` can never both append (every run recorded twice);
* the manifest is written atomically (a temporary file, fsync, rename), so a full disk or a crash
  never leaves a truncated manifest that would block a resume;
* a folder that holds records but no manifest is refused (nothing says what design they belong
  to); a folder whose manifest records other options is refused, naming the option that differs;
* a torn last line (a crash mid-write) is cut off before appending (``torn_cut`` says how many
  bytes, for the run to say so); nothing else is ever changed;
* a folder that holds other files but no manifest is not a run folder: refused, so a run never
  writes its tables over files it did not make.
"""
from __future__ import annotations

import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Callable, Iterable

from guardbench.errors import GuardbenchError
from guardbench.records.jsonline import record_line
from guardbench.records.record import RunRecord
from guardbench.records.runfile import read_records
from guardbench.util.outputs import cannot_write, check_out_dir, cut_torn_tail

# manifest option key -> the command-line option that sets it (for "resume refused" messages)
OPTION_FLAGS = {"cases": "--case", "families": "--family", "arms": "--arms", "agents": "--agent",
                "variants": "--variants", "generate_variants": "--generate-variants",
                "seed": "--seed",
                "policy": "--policy", "approvals": "--approvals", "models": "--model",
                "repeats": "--repeats",
                "temperature": "--temperature", "max_tokens": "--max-tokens",
                "api_base": "--api-base",
                "client": "--client", "tool_protocol": "--tool-protocol",
                "max_steps": "--max-steps"}


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, fsync'd, then
    renamed."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:  # cleanup, then re-raise: even Ctrl-C leaves no temporary file
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise cannot_write(path, exc) from None
        raise
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _differs(old: dict, new: dict) -> str | None:
    """The first design difference between two manifests, as the option that sets it."""
    for key in ("cases_hash", "policy_hash"):
        if old.get(key) != new.get(key):
            return {"cases_hash": "the case files differ (cases hash)",
                    "policy_hash": "the policy file differs (policy hash)"}[key]
    # an LLM run's texts
    if "prompts" in old and "prompts" in new and old["prompts"] != new["prompts"]:
        return ("the prompts differ (recorded "
                f"{_show((old['prompts'] or {}).get('version'))}, this run "
                f"{_show((new['prompts'] or {}).get('version'))}: "
                "guardbench/arms/prompts.py changed)")
    a, b = old.get("options") or {}, new.get("options") or {}
    for key in list(dict.fromkeys([*b, *a])):
        if a.get(key) != b.get(key):
            flag = OPTION_FLAGS.get(key, key)
            return f"{flag} differs (recorded {_show(a.get(key))}, this run {_show(b.get(key))})"
    return None


NO_MANIFEST = ("holds runs.jsonl but no manifest.json, so nothing says which options its "
               "records were made "
               "with; choose another --out")
BUSY = ("another guardbench run is writing this folder; wait for it to finish or choose "
        "another --out")


def refuse_other_options(out: Path, manifest: dict) -> None:
    """Before anything starts (an arm's server, a model's preflight): a folder whose recorded
    manifest differs from ``manifest`` is refused with the error the writer would give. A folder
    that cannot be read is left to the writer to report; so is a folder another writer holds (its
    message says so)."""
    try:
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise GuardbenchError(str(out), BUSY) from None
    finally:
        os.close(fd)                  # closing drops the lock: the writer takes it for itself
    mpath = Path(out) / "manifest.json"
    if not mpath.exists():
        _refuse_foreign(Path(out))
    try:
        old = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return
    if isinstance(old, dict):
        _refuse_differing(out, old, manifest)


def _refuse_foreign(out: Path) -> None:
    """A folder without a manifest that holds files a run did not write (a run's own start leaves
    its manifest first) is refused: the run's tables would be written over them."""
    runs = out / "runs.jsonl"
    if runs.is_file() and runs.stat().st_size:
        raise GuardbenchError(str(out), NO_MANIFEST)
    try:
        present = sorted(n for n in os.listdir(out) if n != "runs.jsonl")
    except OSError:
        return
    if present:
        raise GuardbenchError(str(out),
                              f"holds other files ({present[0]}"
                              f"{', ...' if len(present) > 1 else ''}) and no manifest.json, "
                              "so it is not a run folder; choose a new or empty --out")


def _refuse_differing(out: Path, old: dict, manifest: dict) -> None:
    why = _differs(old, manifest)
    if why:
        raise GuardbenchError(str(out), f"holds a run made with other options: {why}; choose "
                              "another --out "
                                        "or rerun with the same options")


def _show(v: object) -> str:
    if isinstance(v, list):
        return ",".join(map(str, v)) or "none"
    return "not given" if v is None else str(v)


class RunFolderWriter:
    """The one writer of a run folder while it is open (use as a context manager)."""

    def __init__(self, out: Path, manifest: dict) -> None:
        self.out = check_out_dir(Path(out))
        self.runs = self.out / "runs.jsonl"
        self.appended = 0
        self.torn_cut = 0
        self._fh: IO[str] | None = None
        self._fd: int | None = os.open(self.out, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.close()
            raise GuardbenchError(str(self.out), BUSY) from None
        try:
            self.manifest = self._manifest(manifest)
            self.torn_cut = self._drop_torn_tail()
            self.earlier: list[RunRecord] = read_records(self.runs, slim=True)
        except BaseException:  # cleanup, then re-raise: whatever stops the start releases the lock
            self.close()
            raise

    def _manifest(self, manifest: dict) -> dict:
        mpath = self.out / "manifest.json"
        if mpath.exists():
            try:
                old = json.loads(mpath.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                raise GuardbenchError(str(mpath), "not valid JSON: this folder cannot be "
                                      "resumed; choose "
                                                  "another --out") from None
            if not isinstance(old, dict):
                raise GuardbenchError(str(mpath), "not a JSON object; choose another --out")
            _refuse_differing(self.out, old, manifest)
            return old
        if self.runs.exists() and self.runs.stat().st_size:
            raise GuardbenchError(str(self.out), NO_MANIFEST)
        _refuse_foreign(self.out)
        write_atomic(mpath, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        return manifest

    def _drop_torn_tail(self) -> int:
        if not self.runs.exists():
            return 0
        fd = os.open(self.runs, os.O_RDWR)
        try:
            return cut_torn_tail(fd)
        finally:
            os.close(fd)

    def write(self, line: str) -> None:
        """Append one JSON line and flush it (a crash or a full disk leaves at most a torn last
        line, which the next start cuts off)."""
        try:
            if self._fh is None:
                self._fh = self.runs.open("a", encoding="utf-8")
            self._fh.write(line)
            self._fh.flush()
        except OSError as exc:
            # whatever is buffered is lost with the line; the lines before are kept
            self._fh = None
            raise GuardbenchError(str(self.runs), f"cannot write: {exc.strerror or exc}; the "
                                  f"{self.appended} "
                                                  "runs recorded before are kept: run "
                                                  "again to resume") from None
        self.appended += 1

    def append(self, items: Iterable[tuple[str, RunRecord]],
               on_each: Callable[[RunRecord], None] | None = None) -> list[RunRecord]:
        """Append each ``(JSON line, slim record)``, flushed one by one; returns the slim
        records."""
        out: list[RunRecord] = []
        for line, rec in items:
            self.write(line)
            out.append(rec)
            if on_each is not None:
                on_each(rec)
        return out

    def add(self, rec: RunRecord) -> RunRecord:
        """Append one record; returns its slim form."""
        line, small = encode(rec)
        self.write(line)
        return small

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                pass                       # flushed after every line: nothing complete is lost
            self._fh = None
        if self._fd is not None:
            os.close(self._fd)        # releases the lock
            self._fd = None

    def __enter__(self) -> "RunFolderWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def encode(rec: RunRecord) -> tuple[str, RunRecord]:
    """A record's line in runs.jsonl, and its slim form (what tables keep in memory)."""
    return record_line(rec) + "\n", rec.slimmed()
