"""guardbench policy check [FILE]: load a policy and print what each operation permits."""
from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from guardbench.broker import Policy


def _label(kind: str) -> str:
    return {"order": "an order_id", "capture": "a capture_id",
            "payout_batch": "a payout_batch_id"}.get(kind, kind)


def describe(policy: Policy) -> str:
    """A readable account of what every operation of ``policy`` permits."""
    from guardbench.broker.money import fmt
    from guardbench.broker.paths import path_text

    lines = [f"policy: {policy.source}", f"environment: {policy.environment}",
             "operator: " + ", ".join(f"{k}={v}" for k, v in policy.operator.items())]
    if policy.catalogue:
        lines.append("catalogue: " + ", ".join(f"{sku} ({policy.catalogue_names[sku]}, {fmt(p)})"
                                               for sku, p in policy.catalogue.items()))
    for op in policy.operations.values():
        ep = op.endpoint
        lines += ["", f"{op.name}: {ep.method} {ep.path}  "
                  f"[{ep.name}{', moves money' if op.moves_money else ''}]"]
        if op.description:
            lines.append(f"  {op.description}")
        if op.reference:
            lines.append(f"  reference:  an id this broker issued as {_label(op.reference)}"
                         + ("; its amount counts toward the limits" if op.amount_from else ""))
        if op.agent:
            for i, f in enumerate(op.agent.values()):
                if f.type == "decimal":
                    # a decimal field needs a max (broker/policy.py refuses one without)
                    assert f.max is not None
                    what = f"decimal {fmt(f.min) if f.min is not None else '0.01'} .. {fmt(f.max)}"
                elif f.type == "enum":
                    what = "one of " + ", ".join(f.values)
                else:
                    what = (f"text, at most {f.max_length} characters, no "
                            "URLs/domains/e-mails/IBANs/digit runs")
                targets = ", ".join(path_text(p) for p in (f.path,) + f.copies)
                if f.label_path:
                    targets += f" (name -> {path_text(f.label_path)})"
                opt = "" if f.required else " (optional)"
                lines.append(f"  {'agent:' if i == 0 else '':<11} {f.name}{opt}: {what} "
                             f"-> {targets}")
        else:
            lines.append("  agent:      nothing")
        for i, (p, v) in enumerate(op.bound.items()):
            lines.append(f"  {'bound:' if i == 0 else '':<11} {p} = {v}")
        derived = [f"{p} = {src}" for p, src in op.derived.items()]
        derived += ["Authorization = OAuth token (client credentials)"]
        if ep.method == "POST":
            derived += ["PayPal-Request-Id = idempotency key (operation, params, reference, "
                        "60 s window)"]
        for i, d in enumerate(derived):
            lines.append(f"  {'derived:' if i == 0 else '':<11} {d}")
        lim = op.limits
        if lim:
            parts = []
            if "per_call_max" in lim:
                parts.append(f"per call {fmt(lim['per_call_max'])}")
            if "daily_total_max" in lim:
                parts.append(f"per 24 h {fmt(lim['daily_total_max'])}")
            if "max_calls_per_hour" in lim:
                parts.append(f"{lim['max_calls_per_hour']} calls/hour")
            lines.append("  limits:     " + ", ".join(parts))
        else:
            lines.append("  limits:     none")
        if op.approval_over is not None:
            lines.append(f"  approval:   above {fmt(op.approval_over)} (amount, or "
                         "amount plus the " "last 24 h's "
                         "un-approved spend)")
        else:
            lines.append("  approval:   not required")
        if op.response:
            lines.append("  returns:    " + ", ".join(r.name for r in op.response))
    return "\n".join(x for line in lines for x in _fit(line))


def _fit(line: str, width: int = 100) -> list[str]:
    """A line wrapped to ``width`` columns; a labelled line (``  agent:      ...``) continues two
    columns right of its text, any other two columns in."""
    import textwrap
    if len(line) <= width:
        return [line]
    label = line[2:13].strip()
    labelled = line.startswith("  ") and line[13:14] == " " and (not label or label.endswith(":"))
    indent = " " * (16 if labelled else 4 if line.startswith("  ") else 2)
    return textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


@click.group("policy")
def policy() -> None:
    """Check a policy file and print what each operation permits."""


@policy.command("check")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
def check(file: str | None) -> None:
    """Load FILE (default: the shipped example policy); exit 2 naming the rule it breaks."""
    from guardbench.broker.policy import load_policy

    click.echo(describe(load_policy(file)))
    click.echo("\npolicy ok")
