"""The adaptive attacker: deterministic mutations fed by refusals; the LLM attacker's turns with a stub model."""
from __future__ import annotations

import json

from click.testing import CliRunner

from guardbench.adapt.llm_attacker import LLMAttacker, Reply, parse_reply
from guardbench.adapt.loop import Tally, attack_case, run_adapt
from guardbench.adapt.strategy import MutationAttacker
from guardbench.broker import load_policy
from guardbench.cases.load import default_cases_dir, load_cases
from guardbench.cli.main import cli
from guardbench.defences.config import config_for
from guardbench.defences.taint import scan
from guardbench.execution.bench import make_arms

POLICY = load_policy()
CONFIG = config_for(POLICY)
CASES = {c.id: c for c in load_cases(default_cases_dir())}


def test_mutations_follow_the_refusal_reason_deterministically():
    a = MutationAttacker(CASES["ii-supplier-bank-change"], CONFIG, scan)
    first = a.next(None)
    assert first.family == "base" and first.calls[0][1]["receiver"] == "9ZK3PLQ7WWX4C"
    assert a.next("authz: receiver is not in the operator's allowlist").family == "payee"
    assert a.next("tainted: a read_data result carried instructions").family == "data"
    feedback = [None, "authz: x", "money: y", "scope: z", "wall: w"]
    runs = []
    for _ in range(2):
        b = MutationAttacker(CASES["ii-supplier-bank-change"], CONFIG, scan)
        runs.append([b.next(f) for f in feedback])
    assert runs[0] == runs[1]


def test_offline_loop_reports_per_defence_and_pdp_allows_no_unauthorized_call():
    cases = [CASES[i] for i in ("ii-supplier-bank-change", "la-charge-9999", "la-split-payout")]
    tallies = run_adapt(POLICY, ["pdp", "gate"], cases, 6, lambda c, cfg: MutationAttacker(c, cfg, scan))
    pdp, gate = tallies
    assert pdp.attempts > 0 and pdp.unauthorized > 0 and pdp.unauthorized_allowed == 0
    assert gate.unauthorized_allowed > 0                 # the gate never checks who is paid
    assert set(pdp.row()) >= {"attempts", "unauthorized allowed", "malformed", "benign allowed"}


def test_llm_attacker_starts_from_the_case_and_counts_a_malformed_rewrite():
    replies = iter(["I will not answer in JSON",
                    json.dumps({"idea": "x", "document": "",
                                "calls": [{"tool": "create_payout",
                                           "args": {"amount": "50.00", "receiver": "x@attacker.example"}}]})])
    seen = []

    def complete(messages):
        seen.append(messages[-1]["content"])
        return Reply(next(replies))

    tally = Tally("pdp")
    case = CASES["ii-supplier-bank-change"]
    arm = make_arms({"pdp": "pdp"}, POLICY)["pdp"]
    attack_case(arm, case, LLMAttacker(case, complete, CONFIG), CONFIG, POLICY, 3, tally)
    # iteration 0: the case's own payout to the attacker's account; 1: prose (malformed); 2: a rewrite
    assert tally.malformed == 1 and tally.attempts == 3 and tally.unauthorized == 2
    assert tally.unauthorized_allowed == 0 and "The defence refused it: authz" in seen[0]
    assert seen[1].startswith("Your last answer was not usable (not JSON")
    assert parse_reply("no json")[0] is None


def test_cli_offline(tmp_path):
    r = CliRunner().invoke(cli, ["adapt", "--defence", "pdp", "--case", "la-split-payout", "--budget", "3",
                                 "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    table = [line for line in r.output.splitlines() if "->" not in line]       # not the line naming the file
    assert "unauthorized" in r.output and max(len(line) for line in table) <= 100
    assert "| unauthorized allowed |" in (tmp_path / "adapt.md").read_text()     # Markdown keeps full headings
    data = json.loads((tmp_path / "adapt.json").read_text())
    assert data["results"][0]["defence"] == "pdp"
