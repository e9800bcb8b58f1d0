"""guardbench.adapt: an adaptive attacker that rewrites each attack from the refusal it got.

strategy.py: the attackers (offline deterministic mutations; an LLM through agents/providers.py).
loop.py: the loop over adversarial cases against a defended arm or the guardrail broker.
"""
