"""Load and validate case files (cases/*.yaml) against the shipped JSON Schema.

A malformed case file is a CaseError naming the file, the case and the field.

Validation is remembered: once a file's exact bytes passed the schema's exact bytes, a marker
named by sha256(guardbench version, schema, file) is kept in ``$XDG_CACHE_HOME/guardbench/
cases-valid/`` (``GUARDBENCH_CASE_CACHE``: another folder, or ``off``), so an unchanged corpus
is not validated, nor jsonschema imported, again. Any change to the file or the schema misses
the marker and is validated; only a file that passed is ever marked; a folder that cannot be
written costs nothing but the time. The constructs check (``check_constructs``) always runs.

A case file is bounded: at most ``MAX_CASE_FILE_BYTES`` bytes, and YAML aliases that expand to at
most guardbench.util.yamldoc.MAX_NODES nodes (an alias bomb is refused, naming the file, before it
is built).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from guardbench.cases.scenario import NO_SCENARIO, Scenario
from guardbench.errors import CaseError

if TYPE_CHECKING:
    import jsonschema

SCHEMA_PATH = Path(__file__).with_name("schema.json")
MAX_CASE_FILE_BYTES = 4_000_000     # the largest shipped case file is 20 kB
FAMILIES = ("benign", "direct_injection", "indirect_injection", "policy_attack",
            "limit_attack", "in_policy")
ADVERSARIAL = FAMILIES[1:]


@dataclass(frozen=True)
class Action:
    """One thing the text asks for, stated structurally (what a credulous reader would do)."""

    do: str
    sku: str | None = None
    amount: str | None = None
    ref: str | None = None
    note: str | None = None
    payee: str | None = None
    currency: str | None = None
    url: str | None = None
    skip_approval: bool = False
    repeat: int = 1
    split: int = 1
    changes: tuple = ()
    written: str | None = None       # how the text writes the amount; ``amount`` is what it means
    full: bool = False               # refund with no amount: PayPal's full refund of what remains
    # setup: before this run, off its wire (never issued by this run)
    prior: bool = False
    carries_data: bool = False       # setup charge: the variant's data is the order's description
    secret_in: str | None = None     # override: put the credential into this request field
    approval: str | None = None      # override: present this (reused) approval id
    # user_asks: how far the amount moved may differ and still be what was asked
    tolerance: str | None = None

    @classmethod
    def from_dict(cls, d: dict) -> "Action":
        d = dict(d)
        if "changes" in d:
            d["changes"] = tuple(sorted((str(k), str(v)) for k, v in d["changes"].items()))
        return cls(**d)

    @property
    def overrides(self) -> dict[str, Any]:
        """The hostile modifiers this action carries (empty for an honest action)."""
        out = {k: getattr(self, k) for k in ("payee", "currency", "url", "secret_in", "approval")
               if getattr(self, k)}
        if self.skip_approval:
            out["skip_approval"] = True
        if self.changes:
            out["changes"] = dict(self.changes)
        return out


@dataclass(frozen=True)
class Variant:
    user: str
    data: str | None = None


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    title: str
    user_asks: tuple[Action, ...]
    asks: tuple[Action, ...]
    variants: tuple[Variant, ...]
    setup: tuple[Action, ...] = ()
    goal: dict | None = None
    expect: tuple[dict, ...] = ()
    # must_call, must_not_call, answer, pii (scoring/scenario.py)
    scenario: Scenario = NO_SCENARIO
    data_source: str = "none"
    phrasing: str = "instruction"
    source: str = ""
    currency: str | None = None      # the currency the case's amounts are in (None: the policy's)
    # what the user authorised, when more than user_asks (scoring/intent.py)
    authorised: tuple[dict, ...] = ()

    @property
    def adversarial(self) -> bool:
        return self.family != "benign"

    @property
    def data_in_lookup(self) -> bool:
        """The data reaches the agent inside a lookup's result (an order's description), not
        read_data."""
        return any(a.carries_data for a in self.setup)


_validator: jsonschema.Draft202012Validator | None = None


def _schema_validator() -> jsonschema.Draft202012Validator:
    global _validator
    if _validator is None:
        import jsonschema
        schema = json.loads(SCHEMA_PATH.read_text())
        _validator = jsonschema.Draft202012Validator(schema)
    return _validator


def _where(doc: Any, path: Iterable) -> tuple[str, str]:
    """(case id or index, field path) for a jsonschema error path."""
    path = list(path)
    case = "-"
    if len(path) >= 2 and path[0] == "cases" and isinstance(path[1], int):
        try:
            case = str(doc["cases"][path[1]].get("id", f"#{path[1]}"))
        except (KeyError, IndexError, TypeError, AttributeError):   # best effort naming only
            case = f"#{path[1]}"
        path = path[2:]
    field_ = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in path).replace(".[", "[")
    return case, field_ or "(case)"


def _validated_marker(text: str) -> Path | None:
    where = os.environ.get("GUARDBENCH_CASE_CACHE")
    if where == "off":
        return None
    from guardbench.util.version import __version__
    base = Path(where) if where else Path(os.environ.get("XDG_CACHE_HOME") or Path.home()
                                          / ".cache") / "guardbench"
    h = hashlib.sha256(__version__.encode() + b"\0" + SCHEMA_PATH.read_bytes() + b"\0"
                       + text.encode("utf-8"))
    return (base if where else base / "cases-valid") / h.hexdigest()


def touch_marker(marker: Path | None) -> None:
    """Leave a cache marker (a passed check, remembered for its exact inputs); a cache that cannot
    be written only costs the check next time."""
    if marker is None:
        return
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass


def parse_case_file(path: Path, text: str | None = None) -> list[Case]:
    from guardbench.util import yamldoc
    path = Path(path)
    try:
        if text is None:
            size = path.stat().st_size
            if size > MAX_CASE_FILE_BYTES:
                raise CaseError(str(path), f"{size:,} bytes: a case file is at most "
                                f"{MAX_CASE_FILE_BYTES:,} "
                                           "(split it into several files)")
            text = path.read_text(encoding="utf-8")
        doc = yamldoc.load(text)
    except OSError as exc:
        raise CaseError(str(path), f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise CaseError(str(path), f"not UTF-8 text: byte {exc.object[exc.start]:#04x} at line "
                        f"{line} (save the "
                                   "file as UTF-8)") from None
    except yamldoc.YamlError as exc:
        raise CaseError(str(path), str(exc)) from None
    marker = _validated_marker(text)
    if marker is None or not marker.exists():
        # the family-dependent requirements (allOf) only make sense once the fields themselves are
        # valid
        errors = sorted(_schema_validator().iter_errors(doc),
                        key=lambda e: ("allOf" in e.schema_path, [str(p) for p in e.absolute_path]))
        if errors:
            err = errors[0]
            case, fld = _where(doc, err.absolute_path)
            raise CaseError(str(path), f"case {case}: field {fld}: {err.message}")
        touch_marker(marker)
    cases = []
    for raw in doc["cases"]:
        raw = read_amounts(path, raw)
        user_asks = tuple(Action.from_dict(a) for a in raw["user_asks"])
        check_constructs(path, raw)
        cases.append(Case(
            id=raw["id"], family=raw["family"], title=raw["title"],
            user_asks=user_asks,
            asks=tuple(Action.from_dict(a) for a in raw.get("asks", raw["user_asks"])),
            variants=tuple(Variant(v["user"], v.get("data")) for v in raw["variants"]),
            setup=tuple(Action.from_dict(a) for a in raw.get("setup", ())),
            scenario=Scenario.from_raw(raw),
            goal=raw.get("goal"), expect=tuple(raw.get("expect", ())),
            data_source=raw.get("data_source", "none"), phrasing=raw.get("phrasing", "instruction"),
            source=str(path), currency=raw.get("currency"),
            authorised=tuple(raw.get("authorised", ()))))
    return cases


MONEY_DO = ("charge", "refund", "payout")
# actions on an id the account holds (opened by a buyer, or by the operator outside any agent)
ACCOUNT_DO = ("accept_claim", "cancel_subscription", "send_invoice")
# currencies PayPal takes without decimals (paypal/standin_core.CURRENCY_DECIMALS; a test holds them
# equal)
ZERO_DECIMAL = frozenset({"HUF", "JPY", "TWD"})
_AMOUNT_KEYS = ("amount", "up_to", "tolerance")


def read_amounts(path: Path, raw: dict) -> dict:
    """Amounts as users write them: ``amount_minor`` ("200": 2.00 in a two-decimal currency) becomes
    the decimal ``amount``; an amount written without a decimal point in a currency that has
    decimals ("200": 200.00 or 2.00?) is refused, naming the file, the case and the field. Never
    read silently."""
    cid = raw.get("id", "-")
    case_ccy = raw.get("currency")
    out = dict(raw)
    for label in ("setup", "user_asks", "asks", "authorised", "expect"):
        if label not in raw:
            continue
        acts = []
        for i, a in enumerate(raw[label]):
            a = dict(a)
            fld = f"{label}[{i}]"
            ccy = a.get("currency") or case_ccy
            if "amount_minor" in a:
                if "amount" in a:
                    raise CaseError(str(path),
                                    f"case {cid}: field {fld}.amount_minor: give amount "
                                    "or amount_minor, "
                                               "not both")
                if ccy is None:
                    raise CaseError(str(path),
                                    f"case {cid}: field {fld}.amount_minor: minor units "
                                    "need a currency "
                                               "(the case's currency: or the action's)")
                minor = int(a.pop("amount_minor"))
                a["amount"] = (str(minor) if ccy in ZERO_DECIMAL
                               else f"{minor // 100}.{minor % 100:02d}")
            for key in _AMOUNT_KEYS:
                _unambiguous(path, cid, f"{fld}.{key}", a.get(key), ccy)
            acts.append(a)
        out[label] = acts
    if isinstance(raw.get("goal"), dict):
        _unambiguous(path, cid, "goal.amount", raw["goal"].get("amount"),
                     raw["goal"].get("currency") or case_ccy)
    return out


def _unambiguous(path: Path, cid: str, fld: str, value: object, ccy: str | None) -> None:
    if isinstance(value, str) and "." not in value and ccy not in ZERO_DECIMAL:
        raise CaseError(str(path), f"case {cid}: field {fld}: {value!r} has no decimal point, so "
                        "its unit is "
                                   f"ambiguous ({value}.00, or {Decimal(value) / 100} in minor "
                                   "units?): write "
                                   f"\"{value}.00\" or amount_minor: \"{value}\"")
# PayPal caps a purchase unit's description at 127 characters
DESCRIPTION_MAX = 127


# complexity over 20, kept: one rule per case construct (where it may appear, with what)
def check_constructs(path: Path, raw: dict) -> None:  # noqa: C901
    """What the schema cannot say about the constructs: where each may appear, with what."""
    cid = raw["id"]

    def bad(fld: str, what: str) -> CaseError:
        return CaseError(str(path), f"case {cid}: field {fld}: {what}")

    setup = raw.get("setup", [])
    seen_live = False
    held = False
    for i, a in enumerate(setup):
        fld = f"setup[{i}]"
        if a["do"] in ACCOUNT_DO:
            raise bad(f"{fld}.do", f"{a['do']} acts on what the account already holds: it is "
                      "no setup step")
        if a.get("prior"):
            if seen_live:
                raise bad(f"{fld}.prior", "steps from before the run come first in setup")
            if a["do"] not in ("charge", "capture", "payout"):
                raise bad(f"{fld}.prior", "only a charge, capture or payout can have happened "
                          "before the run")
        else:
            seen_live = True
            if str(a.get("ref", "")).startswith("$prior_"):
                raise bad(f"{fld}.ref", "a setup step of this run cannot act on a reference "
                          "from before it")
        if a["do"] in ("approve", "reject"):
            if not held:
                raise bad(f"{fld}.do", f"{a['do']} must directly follow a refund or payout of "
                          "this run's setup")
            held = False
            continue
        held = a["do"] in ("refund", "payout") and not a.get("prior")
        if a.get("carries_data") and (a["do"] != "charge" or a.get("prior")):
            raise bad(f"{fld}.carries_data", "only a setup charge of this run can carry the data")
    if any(a.get("carries_data") for a in setup):
        for j, v in enumerate(raw["variants"]):
            if v.get("data") is None or len(v["data"]) > DESCRIPTION_MAX:
                raise bad(f"variants[{j}].data", "an order description needs data of "
                          f"1-{DESCRIPTION_MAX} "
                                                  "characters")
    approvals = any(a["do"] in ("approve", "reject") for a in setup)
    for label in ("setup", "user_asks", "asks"):
        for i, a in enumerate(raw.get(label, [])):
            fld = f"{label}[{i}]"
            if label != "setup" and a["do"] in ("approve", "reject"):
                raise bad(f"{fld}.do", "approve and reject are the operator's setup steps")
            if label != "setup" and (a.get("prior") or a.get("carries_data")):
                raise bad(fld, "prior and carries_data describe setup steps")
            if a["do"] in ACCOUNT_DO and not a.get("ref"):
                raise bad(f"{fld}.ref", f"a {a['do']} names the id the account holds (a dispute, "
                          "subscription or "
                                        "invoice)")
            if a.get("full") and (a["do"] != "refund" or "amount" in a):
                raise bad(f"{fld}.full", "a full refund is a refund without an amount")
            if a["do"] in MONEY_DO and "amount" not in a and not a.get("full"):
                raise bad(f"{fld}.amount", "required (a refund of everything left says full: true)")
            if a.get("written") and "amount" not in a:
                raise bad(f"{fld}.written", "states how the text writes an amount: give the "
                          "amount it means")
            si = a.get("secret_in")
            if si and a["do"] not in (("refund", "payout", "charge") if si == "note"
                                      else ("refund", "charge")):
                raise bad(f"{fld}.secret_in", f"a {a['do']} has no {si} field")
            if a.get("approval"):
                if a["do"] not in ("refund", "payout"):
                    raise bad(f"{fld}.approval", "only a refund or payout is held for approval")
                if a["approval"] == "$approval" and not approvals:
                    raise bad(f"{fld}.approval", "$approval needs an approve or reject "
                              "step in setup")


def default_cases_dir() -> Path:
    """cases/ beside the package in a source checkout."""
    return Path(__file__).resolve().parents[2] / "cases"


def case_files(cases_dir: Path | None = None) -> list[Path]:
    d = Path(cases_dir) if cases_dir else default_cases_dir()
    if not d.is_dir():
        raise CaseError(str(d), "cases folder not found")
    return sorted(p for p in d.glob("*.yaml"))


def load_cases(cases_dir: Path | None = None) -> list[Case]:
    """Every case in the folder, in file then document order; ids must be unique."""
    out: list[Case] = []
    seen: dict[str, str] = {}
    for p in case_files(cases_dir):
        for c in parse_case_file(p):
            if c.id in seen:
                raise CaseError(str(p), f"case {c.id}: field id: duplicate of a case in "
                                f"{seen[c.id]}")
            seen[c.id] = str(p)
            out.append(c)
    if not out:
        raise CaseError(str(cases_dir or default_cases_dir()), "no cases found")
    return out


def cases_hash(cases_dir: Path | None = None) -> str:
    """sha256 over the case files' names and bytes (what a preregistration pins)."""
    h = hashlib.sha256()
    for p in case_files(cases_dir):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()
