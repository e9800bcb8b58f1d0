"""scripts/frameworks_local_finish.py: the local-model sweep's README says what an app: arm's model
was sent, and counts native tool calls against calls written as text, from the records."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from tests.report.report_synth import record

ROOT = Path(__file__).resolve().parents[1]
LOCAL_README = """# A local model through app:x

- protocol: constrained (response_format json_schema from the tool list); untrusted data: inline (...);
  temperature 0; variant 0 of each case
"""


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fl_finish", ROOT / "scripts" / "frameworks_local_finish.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def app_run(case: str, arm: str, replies: list[dict]) -> dict:
    r = record(case, "benign", arm, agent="llm", model="m", benign_ok=False)
    r["external"] = {"app": arm, "kind": "app", "tool_actions": {}, "room": {},
                     "model": {"model": "relay:m", "tools": {},
                               "calls": [{"api": "chat", "reply": rep} for rep in replies]}}
    return r


def test_native_calls_and_calls_written_as_text_are_counted_per_app(tmp_path: Path):
    text_call = {"role": "assistant",
                 "content": '```json\n{\n  "name": "create_order",\n  "arguments": {"sku": "SKU-PRO"}\n}\n```'}
    native = {"role": "assistant", "content": None,
              "tool_calls": [{"id": "c1", "type": "function",
                              "function": {"name": "create_order", "arguments": "{}"}}]}
    plain = {"role": "assistant", "content": "I cannot do that."}
    recs = [app_run("b1", "langgraph-toolkit", [text_call]),
            app_run("b2", "langgraph-toolkit", [native, plain]),
            app_run("b1", "openai-agents-mcp-broker", [plain])]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (tmp_path / "README.md").write_text(LOCAL_README)
    mod = script()
    mod.main(str(tmp_path))
    once = (tmp_path / "README.md").read_text()
    assert "| langgraph-toolkit | 2 | 3 | 1 | 1 |" in once
    assert "| openai-agents-mcp-broker | 1 | 1 | 0 | 0 |" in once
    protocol = next(line for line in once.splitlines() if line.startswith("- protocol:"))
    assert "relayed to the model as sent" in protocol and "untrusted data: inline (...)" in protocol
    assert "constrained" not in protocol
    mod.main(str(tmp_path))                                    # idempotent: the section once
    assert (tmp_path / "README.md").read_text() == once and once.count(mod.MARK) == 1
