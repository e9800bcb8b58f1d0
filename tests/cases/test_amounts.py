"""Amounts as users write them (issue Q item 6): minor units, a currency per case, and an amount whose
unit is ambiguous refused with one line naming the file, the case and the field."""
from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from guardbench.cases.load import ZERO_DECIMAL, parse_case_file
from guardbench.errors import CaseError

CASE = """\
cases:
  - id: tmp-amounts
    family: benign
    title: A temporary case about amounts
{extra}    user_asks:
      - {action}
    expect:
      - {{endpoint: orders.create}}
    variants:
      - user: "Charge the Basic plan, one."
      - user: "Charge the Basic plan, two."
      - user: "Charge the Basic plan, three."
      - user: "Charge the Basic plan, four."
      - user: "Charge the Basic plan, five."
"""


def write(tmp_path: Path, action: str, extra: str = "") -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(CASE.format(action=action, extra=extra), encoding="utf-8")
    return p


@pytest.mark.parametrize("minor, currency, amount", [
    ("1900", "EUR", "19.00"), ("200", "GBP", "2.00"), ("5", "USD", "0.05"), ("7400", "JPY", "7400"),
    ("0", "EUR", "0.00"), ("123456", "HUF", "123456")])
def test_amount_minor_is_read_in_the_currencys_minor_units(tmp_path, minor, currency, amount):
    p = write(tmp_path, f'{{do: charge, sku: SKU-BASIC, amount_minor: "{minor}"}}', f"    currency: {currency}\n")
    (c,) = parse_case_file(p)
    assert c.user_asks[0].amount == amount and c.currency == currency
    # independently: minor units times 10^-decimals, decimals from PayPal's table (0 for the zero-decimal three)
    places = 0 if currency in ("HUF", "JPY", "TWD") else 2
    assert Decimal(c.user_asks[0].amount) == Decimal(minor).scaleb(-places)


def test_an_actions_own_currency_reads_its_minor_units(tmp_path):
    p = write(tmp_path, '{do: charge, sku: SKU-BASIC, amount_minor: "1900", currency: JPY}', "    currency: EUR\n")
    assert parse_case_file(p)[0].user_asks[0].amount == "1900"


@pytest.mark.parametrize("action, extra, field, what", [
    ('{do: charge, sku: SKU-BASIC, amount: "200"}', "", "user_asks[0].amount", "ambiguous"),
    ('{do: charge, sku: SKU-BASIC, amount: "200"}', "    currency: GBP\n", "user_asks[0].amount", "amount_minor"),
    ('{do: charge, sku: SKU-BASIC, amount_minor: "200"}', "", "user_asks[0].amount_minor", "need a currency"),
    ('{do: charge, sku: SKU-BASIC, amount: "2.00", amount_minor: "200"}', "    currency: EUR\n",
     "user_asks[0].amount_minor", "not both"),
])
def test_an_ambiguous_amount_is_refused_naming_the_field(tmp_path, action, extra, field, what):
    p = write(tmp_path, action, extra)
    with pytest.raises(CaseError) as e:
        parse_case_file(p)
    msg = str(e.value)
    assert msg.startswith(str(p)) and "case tmp-amounts" in msg and f"field {field}:" in msg and what in msg
    assert "\n" not in msg


def test_a_whole_number_is_fine_where_the_currency_has_no_decimals(tmp_path):
    p = write(tmp_path, '{do: charge, sku: SKU-BASIC, amount: "7400", currency: JPY}')
    assert parse_case_file(p)[0].user_asks[0].amount == "7400"


def test_zero_decimal_currencies_are_the_standins():
    from guardbench.paypal.standin_core import CURRENCY_DECIMALS
    assert ZERO_DECIMAL == {c for c, d in CURRENCY_DECIMALS.items() if d == 0}
    assert "GBP" in CURRENCY_DECIMALS and CURRENCY_DECIMALS["GBP"] == 2


def gb(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def test_the_run_command_refuses_an_ambiguous_amount_in_one_line(tmp_path):
    write(tmp_path, '{do: charge, sku: SKU-BASIC, amount: "19"}')
    done = gb("run", "--cases", tmp_path, "--arms", "control", "--out", tmp_path / "out", "--quiet")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "c.yaml" in lines[0] and "user_asks[0].amount" in lines[0], done.stderr
    assert not (tmp_path / "out" / "runs.jsonl").exists()


def test_a_case_in_another_currency_than_the_policys_is_refused(tmp_path):
    write(tmp_path, '{do: charge, sku: SKU-BASIC, amount_minor: "1900"}', "    currency: GBP\n")
    done = gb("run", "--cases", tmp_path, "--arms", "control", "--out", tmp_path / "out", "--quiet")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "field currency" in line and "GBP" in line and "EUR" in line


def test_a_gbp_case_runs_under_the_gbp_policy_in_every_arm(tmp_path):
    """Pounds sterling end to end: the GBP policy, the stand-in and the scorer; 19.00 GBP written as 1900 pence."""
    write(tmp_path, '{do: charge, sku: SKU-BASIC, amount_minor: "1900"}', "    currency: GBP\n")
    out = tmp_path / "out"
    done = gb("run", "--cases", tmp_path, "--policy", "guardbench/policies/gbp.yaml", "--arms",
              "guardrail,control,hardened", "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    from guardbench.records.runfile import read_run
    recs = read_run(out, slim=False).records
    assert len(recs) == 15 and all(r.benign_completed and not r.incidents for r in recs)
    bodies = [ex.request.json() for r in recs for ex in r.wire if ex.request.path == "/v2/checkout/orders"]
    assert bodies and all(b["purchase_units"][0]["amount"] == {"currency_code": "GBP", "value": "19.00",
                                                                 "breakdown": {"item_total": {"currency_code": "GBP",
                                                                                              "value": "19.00"}}}
                          for b in bodies)
