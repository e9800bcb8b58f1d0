"""prompt_filter as a defence: the hardened control's text check, per call.

The hardened arm refuses a whole task before the agent acts when the user's message or the
document matches one of arms/prompt_filter.py's rules. Expressed in the defence interface it
is this: every call except reading the document is denied once the user's message (trusted
context) or a document the session read (history) matches a rule. It reads wording only; it
promises nothing about a call's values, so every value-level bypass passes it.
"""
from __future__ import annotations

from typing import Sequence

from guardbench.arms import prompt_filter
from guardbench.defences.base import Context, ToolCall, Turn, Verdict, allow, deny
from guardbench.defences.config import READ_DATA, DefenceConfig


class PromptFilter:
    name = "prompt_filter"
    promise = ("Refuses every call once the user's message or a document read matches an override "
               "rule (text check).")
    covers: frozenset = frozenset()

    def __init__(self, config: DefenceConfig) -> None:
        self.config = config

    def decide(self, call: ToolCall, history: Sequence[Turn], context: Context) -> Verdict:
        if call.tool == READ_DATA:
            return allow("read_data: reading the document")
        rule = prompt_filter.check(context.user_message,
                                   *(t.result for t in history if t.tool == READ_DATA))
        if rule:
            return deny(f"prompt_filter: the task matches the {rule} rule")
        return allow("no_rule: no override found in the text")
