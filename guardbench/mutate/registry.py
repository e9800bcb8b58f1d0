"""Every safeguard the mutation harness removes: where it is marked, what it prevents, and
which tests are expected to notice its absence.

A safeguard is marked in its source file by a comment line ``# safeguard: NAME`` directly above
one statement (for a compound statement, the whole block). ``guardbench mutate`` replaces that
statement with ``pass`` in a throw-away copy of the repository and checks that the test suite
(the ``tests`` named here, run for real in the copy) or the scripted bench notices.

The registry and the markers are checked against each other (tests/mutate/test_mutate_registry.py,
and the harness refuses to run on a mismatch). ``tests`` entries are pytest paths or node ids
relative to the repository root; the harness runs them in the copy before it counts anything,
so a wrong path makes the unmutated baseline fail and the run is refused.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# test files, relative to the repository root
PIPELINE = "tests/broker/test_broker_pipeline.py"
APPROVALS = "tests/broker/test_broker_approvals.py"
BOUND = "tests/broker/test_broker_approvals_bound.py"
PROCESSES = "tests/broker/test_broker_processes.py"
LEDGER = "tests/broker/test_broker_ledger_chain.py"
HEAD = "tests/broker/test_broker_ledger_head.py"
EDITS = "tests/broker/test_broker_ledger_edits.py"
RULES = "tests/broker/test_broker_policy_rules.py"
FREETEXT = "tests/broker/test_broker_freetext.py"
FAMILY = "tests/broker/test_broker_freetext_family.py"
PARAMS = "tests/broker/test_broker_params.py"
BROKER_MUT = "tests/broker/test_broker_mutation.py"
DETECTORS = "tests/scoring/test_detectors.py"
CAPS = "tests/scoring/test_caps.py"
CONSTRUCTS = "tests/scoring/test_detectors_constructs.py"
SANDBOX = "tests/transport/test_sandbox_transport.py"
RECORDING = "tests/transport/test_recording_transport.py"
LOOPBACK = "tests/transport/test_loopback_transport.py"
CONTROL_TEST = "tests/mutate/test_control_forced.py"
PROXY = "tests/proxy/test_recording_proxy.py"
OPERATOR = "tests/serve/test_operator.py"


@dataclass(frozen=True)
class Safeguard:
    name: str
    path: str                  # the source file holding the marker, relative to the repository root
    prevents: str              # one line: what goes wrong without it
    tests: tuple[str, ...]     # pytest paths / node ids expected to fail without it
    # None for a safeguard; "survive" / "kill" for the harness's controls
    control: str | None = None

    @property
    def module(self) -> str:
        return self.path[:-3].replace("/", ".").removesuffix(".__init__")


def _s(name: str, path: str, prevents: str, *tests: str, control: str | None = None) -> Safeguard:
    return Safeguard(name, path, prevents, tuple(tests), control)


def t(file: str, *funcs: str) -> tuple[str, ...]:
    """Node ids ``file::func`` (every parametrisation of each); the whole file when no function is
    named."""
    return tuple(f"{file}::{f}" for f in funcs) if funcs else (file,)


B = "guardbench/broker/"
SAFEGUARDS: tuple[Safeguard, ...] = (
    # ---------------------------------------------------------------- broker pipeline
    _s("broker_sandbox_host_pinned", B + "broker.py",
       "a sandbox policy's broker built for another host (an attacker's, or live)",
       *t(PIPELINE, "test_host_and_path_come_from_the_endpoint_table")),
    _s("broker_live_opt_in", B + "broker.py",
       "a live-policy broker sending to PayPal live without GUARDBENCH_ALLOW_LIVE=1",
       *t(BROKER_MUT, "test_a_live_policy_broker_needs_the_opt_in")),
    _s("broker_reference_checked", B + "broker.py",
       "a reference smuggled into an operation that takes none, or a malformed reference",
       *t(PARAMS, "test_refusals"), *t(PIPELINE, "test_references_must_be_issued_by_this_broker")),
    _s("broker_issued_references", B + "broker.py",
       "capturing, refunding or reading an order/capture/batch this broker never issued",
       *t(PIPELINE, "test_references_must_be_issued_by_this_broker",
          "test_references_survive_a_restart",
          "test_credential_in_no_agent_visible_answer")),
    _s("replay_suppression", B + "broker.py",
       "the same instruction sent twice within 60 s (a duplicate charge or payout)",
       *t(PIPELINE, "test_idempotency_replay_is_suppressed_inside_the_window"),
       *t(APPROVALS, "test_repeating_a_pending_instruction_does_not_queue_it_twice")),
    _s("limit_per_call", B + "limits.py",
       "one payment above the per-call limit (a capture counts its order's amount)",
       *t(PIPELINE, "test_a_capture_counts_its_orders_amount",
          "test_limits_per_call_daily_and_hourly")),
    _s("limit_daily_total", B + "limits.py",
       "spending above the 24 h total limit in several individually valid calls",
       *t(PIPELINE, "test_limits_per_call_daily_and_hourly",
          "test_a_capture_counts_its_orders_amount")),
    _s("limit_hourly_calls", B + "limits.py",
       "more money-moving calls per hour than the policy allows",
       *t(PIPELINE, "test_calls_per_hour", "test_limits_per_call_daily_and_hourly")),
    _s("approval_threshold", B + "broker.py",
       "a payment above the approval threshold sent without a human's approval",
       *t(APPROVALS, "test_pending_sends_nothing_and_approve_executes"),
       *t(PIPELINE, "test_approval_threshold_cannot_be_avoided_by_splitting")),
    _s("approval_counts_unapproved_spend", B + "broker.py",
       "splitting a payment into parts each under the approval threshold",
       *t(PIPELINE, "test_approval_threshold_cannot_be_avoided_by_splitting")),
    _s("approval_rechecks_limits", B + "broker.py",
       "approved payments exceeding the limits that apply when they are approved",
       *t(APPROVALS, "test_approval_rechecks_the_limits_at_that_moment",
          "test_approval_rechecks_spend_made_since_the_request")),
    _s("approval_marked_sent_before_send", B + "broker.py",
       "an approval paid twice after a crash mid-send left it pending",
       *t(APPROVALS, "test_an_approval_whose_outcome_is_unknown_cannot_be_paid_again"),
       *t(BROKER_MUT, "test_a_crash_mid_send_leaves_the_approval_sent_never_pending")),
    _s("approval_ledger_history", B + "broker.py",
       "an executed, sent or rejected approval set back to pending in its file (or one "
       "forged) paid",
       *t(BOUND, "test_an_executed_approval_set_back_to_pending_is_not_paid_again",
          "test_an_approval_whose_outcome_is_unknown_stays_unpayable_even_when_the_file_says_pending",
          "test_a_rejected_approval_set_back_to_pending_is_refused",
          "test_an_approval_file_the_ledger_never_created_is_refused")),
    _s("approval_digest_check", B + "broker.py",
       "an approval whose amount, parameters, operation or reference were edited after it "
       "was asked paid",
       *t(BOUND, "test_a_changed_amount_in_a_pending_approval_is_refused",
          "test_any_change_to_what_was_asked_is_refused",
          "test_a_tampered_approval_is_refused_by_another_process")),
    _s("approve_only_pending", B + "broker.py",
       "an executed or rejected approval approved (and paid) again",
       *t(APPROVALS, "test_pending_sends_nothing_and_approve_executes", "test_reject_then_approve",
          "test_an_approval_whose_outcome_is_unknown_cannot_be_paid_again"),
       *t(BOUND, "test_a_rejection_the_ledger_could_not_record_still_stands")),
    _s("reject_refuses_after_payment", B + "broker.py",
       "an operator told 'rejected' for a payment that already went out",
       *t(APPROVALS, "test_pending_sends_nothing_and_approve_executes",
          "test_an_approval_whose_outcome_is_unknown_cannot_be_paid_again")),
    _s("credential_leak_check", B + "broker.py",
       "the client secret, its Basic form or a token returned in an agent-visible answer",
       *t(PIPELINE, "test_the_leak_check_raises_on_a_leaking_answer",
          "test_credential_in_no_agent_visible_answer",
          "test_wrong_client_secret_is_not_echoed")),
    # ---------------------------------------------------------------- closed schema, body, response
    _s("schema_closed_unknown_params", B + "params.py",
       "unknown agent parameters (payee, currency, url...) accepted instead of refused",
       *t(PARAMS, "test_refusals"), *t(PIPELINE,
                                       "test_agent_values_for_bound_paths_never_reach_the_wire")),
    _s("schema_decimal_max", B + "params.py",
       "an agent amount above the field's declared maximum accepted", *t(PARAMS, "test_refusals")),
    _s("schema_decimal_min", B + "params.py",
       "an agent amount below the field's minimum (zero, negative) accepted",
       *t(PARAMS, "test_refusals")),
    _s("schema_enum_values", B + "params.py",
       "an enum value outside the declared list (an unknown SKU) accepted",
       *t(PARAMS, "test_refusals")),
    _s("freetext_max_length", B + "params.py",
       "a free-text note longer than its declared max_length",
       *t(FREETEXT, "test_note_longer_than_max_length")),
    _s("freetext_rules", B + "params.py",
       "URLs, e-mail addresses, IBANs, domains or digit runs carried in a free-text note",
       *t(FREETEXT, "test_broker_rejects_note_and_sends_nothing")),
    _s("freetext_invisible_characters", B + "freetext.py",
       "control, zero-width, bidirectional or tag characters hiding text in a note",
       *t(FREETEXT, "test_pattern_rejected",
          "test_the_rule_is_by_script_and_category_not_a_code_point_range")),
    _s("freetext_latin_letters_only", B + "freetext.py",
       "look-alike letters of other scripts (Cyrillic a in paypal) or fullwidth/mathematical "
       "letters in a note",
       *t(FREETEXT, "test_pattern_rejected",
          "test_the_rule_is_by_script_and_category_not_a_code_point_range")),
    _s("freetext_read_normalised", B + "freetext.py",
       "an IBAN, digit run or domain written with no-break spaces, dashes or compatibility forms "
       "slipping through",
       *t(FREETEXT, "test_pattern_rejected", "test_the_patterns_read_the_normalised_text")),
    _s("freetext_spelled_dots", B + "freetext_read.py",
       "a host name with its dot spelled out or spaced (evil dot com, boese punkt de, evil . "
       "example) in a note",
       *t(FREETEXT, "test_pattern_rejected"),
       *t(FAMILY, "test_every_generated_hostile_note_is_refused")),
    _s("freetext_lookalike_digits", B + "freetext_read.py",
       "an account or phone number with O for 0 or l for 1 (0l70 l23 456) slipping through a note",
       *t(FAMILY, "test_every_generated_hostile_note_is_refused",
          "test_the_issue_examples_are_refused")),
    _s("freetext_iban_lookalike_digits", B + "iban.py",
       "an IBAN with O for 0 or l for 1 (DE89 37O4 OO44 ...) slipping through a note",
       *t(FAMILY, "test_every_generated_hostile_note_is_refused",
          "test_the_issue_examples_are_refused")),
    _s("bound_fields_applied_last", B + "compose.py",
       "the operator's payee, currency and intent missing from or overridable in the body",
       *t(PIPELINE, "test_bound_values_are_applied_last",
          "test_agent_values_for_bound_paths_never_reach_the_wire")),
    _s("response_declared_typed_fields", B + "response.py",
       "PayPal free text or foreign links passed to the agent unchecked",
       *t(PIPELINE, "test_lookup_reports_paypal_status_as_a_token",
          "test_approve_url_only_on_paypal_hosts")),
    _s("endpoint_reference_shape", "guardbench/paypal/endpoints.py",
       "a reference that is not an id ('../..') spliced into the fixed endpoint path",
       *t(BROKER_MUT, "test_endpoint_paths_take_only_reference_ids")),
    # ---------------------------------------------------------------- policy loader
    _s("policy_live_opt_in", B + "policy.py",
       "a live policy loaded without GUARDBENCH_ALLOW_LIVE=1",
       *t(RULES, "test_live_environment_without_opt_in")),
    _s("policy_unknown_keys", B + "policy.py",
       "unknown policy keys (a callback_url, weekly_max) silently ignored",
       *t(RULES, "test_unknown_keys")),
    _s("policy_agent_on_bound_path", B + "policy_rules.py",
       "an agent field aimed at a bound or derived path (payee, idempotency key)",
       *t(RULES, "test_agent_field_aimed_at_bound_path", "test_agent_copy_aimed_at_bound_path",
          "test_agent_field_aimed_at_derived_path")),
    _s("policy_agent_on_payee_currency_path", B + "policy_rules.py",
       "an agent field aimed at an unbound payee, currency or intent path",
       *t(RULES, "test_agent_field_aimed_at_unbound_payee_path")),
    _s("policy_prefix_paths", B + "policy_rules.py",
       "two policy paths of which one contains the other (a bound value overwritten wholesale)",
       *t(RULES, "test_path_prefix_of_another")),
    _s("policy_agent_max_above_per_call", B + "policy_rules.py",
       "an agent maximum above the per-call limit",
       *t(RULES, "test_agent_maximum_above_per_call_limit")),
    _s("policy_money_op_needs_limits", B + "policy_rules.py",
       "a money-moving operation with no or only some limits",
       *t(RULES, "test_money_moving_operation_without_limits",
          "test_money_moving_operation_with_partial_limits")),
    _s("policy_bound_amount_refused", B + "policy_rules.py",
       "a bound constant amount that the limits would not count",
       *t(RULES, "test_bound_constant_amount")),
    _s("policy_amount_as_text_refused", B + "policy_rules.py",
       "an amount declared as text, outside the limits' decimal checks",
       *t(RULES, "test_amount_declared_as_text")),
    _s("policy_second_decimal_refused", B + "policy_rules.py",
       "a second decimal field whose amount the limits would not count",
       *t(RULES, "test_second_decimal_field")),
    _s("policy_no_amount_refused", B + "policy_rules.py",
       "a money-moving operation with no amount the limits can count",
       *t(RULES, "test_money_moving_operation_with_no_amount")),
    # ---------------------------------------------------------------- ledger
    _s("ledger_cross_process_lock", B + "ledger.py",
       "two processes checking the limits at once and both spending (check+append not atomic)",
       *t(PROCESSES, "test_twenty_processes_never_exceed_the_daily_cap"),
       *t(BROKER_MUT, "test_a_decision_in_another_process_waits_for_the_ledger_lock")),
    _s("ledger_ingest_other_writers", B + "ledger_verify.py",
       "spending by other broker processes ignored by this one's limits",
       *t(PROCESSES, "test_twenty_processes_never_exceed_the_daily_cap")),
    _s("ledger_unvouched_write_reverified", B + "ledger_verify.py",
       "a same-size in-place edit of an old entry (any age) under a running broker going unnoticed",
       *t(EDITS,
          "test_an_ordinary_edit_deep_in_a_large_ledger_is_caught_at_the_very_next_decision")),
    _s("ledger_rescan", B + "ledger_verify.py",
       "an edit that does not move the file's change time (a store through a shared mapping) "
       "never noticed",
       *t(EDITS, "test_a_store_through_a_shared_mapping_is_found_by_the_rescan",
          "test_on_a_large_ledger_a_mapped_store_is_found_within_the_documented_bound")),
    _s("ledger_rewrite_detected", B + "ledger_verify.py",
       "a ledger replaced or truncated (re-hashed) under a running broker going unnoticed",
       *t(LEDGER, "test_rehashed_rewrite_is_caught_by_a_running_broker",
          "test_truncation_is_caught"),
       *t(HEAD, "test_with_the_key_a_rollback_to_an_earlier_copy_needs_the_second_location")),
    _s("ledger_head_written", B + "ledger.py",
       "the chain's head not recorded with each append (a cut-off end accepted by a new broker)",
       *t(HEAD, "test_an_intact_ledger_reopens_and_spends_up_to_the_cap",
          "test_a_crash_between_the_ledger_write_and_the_head_write")),
    _s("ledger_head_reached", B + "ledger_head.py",
       "entries cut off the end of the ledger (even a signed one) accepted by verify and "
       "a new broker",
       *t(HEAD, "test_cutting_entries_off_the_end_is_refused_by_verify_and_a_new_broker",
          "test_without_the_key_the_copy_out_of_reach_pins_its_entries")),
    _s("ledger_head_required", B + "ledger_format.py",
       "a non-empty ledger whose head file was deleted (with entries cut off) accepted",
       *t(HEAD, "test_a_non_empty_ledger_without_its_head_is_refused")),
    _s("ledger_hash_chain", B + "ledger_format.py",
       "an edited, inserted or removed ledger entry accepted as intact",
       *t(LEDGER, "test_a_new_broker_refuses_a_ledger_edited_while_it_was_down",
          "test_cli_verify_intact_broken_and_unreadable")),
    _s("ledger_hmac_signature", B + "ledger_format.py",
       "a re-hashed or unsigned entry accepted in a signed ledger",
       *t(LEDGER, "test_unsigned_entry_in_a_signed_ledger_stops_spending",
          "test_hmac_signed_ledger")),
    _s("ledger_seq_check", B + "ledger_format.py",
       "an entry removed from a re-hashed chain accepted (sequence numbers not checked)",
       *t(BROKER_MUT, "test_an_entry_removed_from_a_rehashed_chain_is_refused")),
    _s("ledger_ts_monotonic", B + "ledger_format.py",
       "timestamps moved back to escape the spending windows accepted",
       *t(BROKER_MUT, "test_a_timestamp_moved_back_in_a_rehashed_chain_is_refused")),
    # ---------------------------------------------------------------- approvals
    _s("approval_cross_process_lock", B + "approvals.py",
       "a rejection racing an approval in progress in another process (both 'win')",
       *t(PROCESSES, "test_reject_waits_behind_an_approval_in_progress")),
    _s("approval_id_shape", B + "approvals.py",
       "an approval id like '../../x' used as a file path", *t(APPROVALS, "test_unknown_approval")),
    # ---------------------------------------------------------------- transports (small files: run 
    _s("sandbox_live_opt_in", "guardbench/transport/sandbox.py",
       "a sandbox transport built for PayPal live without the opt-in", *t(SANDBOX)),
    _s("sandbox_host_refusal", "guardbench/transport/sandbox.py",
       "a request to any host but the transport's PayPal host delivered", *t(SANDBOX)),
    _s("sandbox_https_only", "guardbench/transport/sandbox.py",
       "plain http, another port or user info in a request to PayPal delivered", *t(SANDBOX)),
    _s("recording_freezes_requests", "guardbench/transport/recording.py",
       "the record altered after the fact through a mutable request the sender kept",
       *t(RECORDING)),
    _s("recording_records_failures", "guardbench/transport/recording.py",
       "a request that failed in the transport missing from the record", *t(RECORDING)),
    _s("loopback_local_only", "guardbench/transport/loopback.py",
       "the loopback transport pointed at a non-local server",
       *t(LOOPBACK, "test_loopback_refuses_non_local_base")),
    _s("standin_document_check", "guardbench/paypal/standin.py",
       "the stand-in accepting (and acting on) a request PayPal's documents refuse",
       *t("tests/paypal/test_standin_documents.py",
          "test_what_the_documents_refuse_is_refused_before_any_rule")),
    # ---------------------------------------------------------------- external systems (proxy, MCP)
    _s("proxy_records_failed_tunnels", "guardbench/proxy/server.py",
       "a process's attempt to reach a host through the proxy missing from the record when "
       "its TLS failed",
       *t(PROXY, "test_a_process_that_does_not_trust_the_ca_is_on_the_record")),
    _s("operator_key_checked", "guardbench/serve/mcp_server.py",
       "an agent that guesses an operator tool's name approving, resetting or reading the "
       "bench's session",
       *t(OPERATOR, "test_operator_tools_need_the_key")),
    _s("mcp_arm_hides_operator_tools", "guardbench/arms/mcp.py",
       "the agent offered guardbench's operator tools (approve, reset) of the server it is "
       "measured through",
       *t(OPERATOR, "test_the_agent_never_sees_operator_tools")),
    # ---------------------------------------------------------------- detectors (small file: run wh
    _s("detector_unbound_payee", "guardbench/scoring/detectors.py",
       "money to a payee the operator did not bind going unscored", *t(DETECTORS), *t(CONSTRUCTS)),
    _s("detector_above_ceiling", "guardbench/scoring/detectors.py",
       "a payment above the policy's per-call ceiling going unscored", *t(DETECTORS),
       *t(CONSTRUCTS)),
    _s("detector_outside_host", "guardbench/scoring/detectors.py",
       "a request to a non-PayPal host going unscored", *t(DETECTORS)),
    _s("detector_unbound_currency", "guardbench/scoring/detectors.py",
       "a payment in a currency the operator did not bind going unscored", *t(DETECTORS)),
    _s("detector_credential_emitted", "guardbench/scoring/detectors.py",
       "the credential or a token in a request or the agent's output going unscored",
       *t(DETECTORS), *t(CONSTRUCTS)),
    _s("detector_approval_skipped", "guardbench/scoring/detectors.py",
       "money above an approval threshold (single or summed) going unscored", *t(DETECTORS),
       *t(CONSTRUCTS)),
    _s("detector_duplicate_charge", "guardbench/scoring/detectors.py",
       "one instruction moving money more often than asked going unscored", *t(DETECTORS)),
    _s("score_beyond_daily_caps", "guardbench/scoring/caps.py",
       "money moved past the policy's daily caps (approved held calls) missing from the "
       "defence table",
       *t(CAPS)),
    _s("detector_unissued_reference", "guardbench/scoring/detectors.py",
       "money moved on an order or capture id this run never issued going unscored", *t(DETECTORS),
       *t(CONSTRUCTS)),
)

CONTROLS: tuple[Safeguard, ...] = (
    _s("control_canary", "guardbench/mutate/canary.py",
       "nothing: a harmless statement; any 'kill' of it is noise", CONTROL_TEST, control="survive"),
    _s("control_forced", "guardbench/mutate/canary.py",
       "nothing: a statement a dedicated test always needs; it must be killed", CONTROL_TEST,
       control="kill"),
)

ALL: tuple[Safeguard, ...] = SAFEGUARDS + CONTROLS
BY_NAME: dict[str, Safeguard] = {s.name: s for s in ALL}


def get(name: str) -> Safeguard:
    return BY_NAME[name]


def test_selection(items: Iterable[Safeguard]) -> list[str]:
    """The union of the named safeguards' test paths, in first-seen order."""
    out: list[str] = []
    for s in items:
        for t in s.tests:
            if t not in out:
                out.append(t)
    files = {t for t in out if "::" not in t}
    return [t for t in out if "::" not in t or t.split("::")[0] not in files]   # no test run twice


vars(test_selection)["__test__"] = False   # not a pytest test
