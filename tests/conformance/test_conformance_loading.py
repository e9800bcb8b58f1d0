"""The one broken document, its patches (needed and sufficient), and the untouched others."""
from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pytest

from guardbench.conformance import loader, patches, specs
from guardbench.errors import SpecError

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/specs/paypal")
BROKEN = "customer_disputes_v1"


def _published(name: str) -> dict:
    return json.loads(specs.read_verified(SHARED, name))


def test_only_one_document_is_broken_as_published():
    from openapi_core import OpenAPI

    for name in specs.load_lock().names:
        if name == BROKEN:
            with pytest.raises(Exception) as err:
                OpenAPI.from_dict(_published(name))
            assert "dispute_state" in str(err.value) or "not valid" in str(err.value)
        else:
            OpenAPI.from_dict(_published(name))  # loads as published


def test_the_published_document_has_exactly_these_defects():
    from openapi_spec_validator import OpenAPIV30SpecValidator

    errors = [str(e).splitlines()[0] for e in OpenAPIV30SpecValidator(_published(BROKEN)).iter_errors()]
    assert len(errors) == 5 == len({p.pointer.rsplit("/", 1)[0] for p in patches.patches_for(BROKEN)})
    joined = "\n".join(errors)
    assert "Duplicate tag name 'referred-disputes'" in joined
    assert "'Current date and time' does not match" in joined
    assert "'The first page of data' does not match" in joined


def test_patches_are_sufficient():
    doc = _published(BROKEN)
    applied = patches.apply_all(BROKEN, doc)
    assert [p.name for p in applied] == [p.name for p in patches.PATCHES]
    loader.build_app(doc)  # raises if anything is still wrong


@pytest.mark.parametrize("skip", [p.name for p in patches.patches_for(BROKEN)])
def test_each_patch_is_needed(skip):
    doc = _published(BROKEN)
    patches.apply_all(BROKEN, doc, skip=(skip,))
    with pytest.raises(Exception):  # noqa: B017 - openapi-core raises its own error types per unpatched defect
        loader.build_app(doc)


def test_patches_are_named_explicit_and_only_touch_the_broken_document():
    assert {p.document for p in patches.PATCHES} == {BROKEN}
    for p in patches.PATCHES:
        assert p.pointer.startswith("/") and p.op == "remove" and p.why and p.becomes
        d = p.to_dict()
        assert d["pointer"] == p.pointer and d["name"] == p.name


def test_patches_change_nothing_else():
    published, patched = _published(BROKEN), loader.document(BROKEN, SHARED).data
    expected = copy.deepcopy(published)
    del expected["components"]["parameters"]["dispute_state"]["enum"]
    del expected["tags"][6]
    del expected["components"]["parameters"]["start_time"]["schema"]["default"]
    del expected["components"]["parameters"]["next_page_token"]["schema"]["default"]
    enum = expected["components"]["schemas"]["tracking_info"]["properties"]["carrier_name"]["enum"]
    del enum[1085], enum[724]
    assert patched == expected
    assert len(set(enum)) == len(set(published["components"]["schemas"]["tracking_info"]
                                     ["properties"]["carrier_name"]["enum"]))


@pytest.mark.parametrize("name", [n for n in specs.load_lock().names if n != BROKEN])
def test_other_documents_untouched(name):
    raw = (SHARED / f"{name}.json").read_bytes()
    assert specs.sha256_bytes(raw) == specs.load_lock().file(name).sha256
    doc = loader.document(name, SHARED)
    assert doc.patches == () and doc.untouched
    assert doc.data == json.loads(raw)


def test_loader_caches_in_process():
    a = loader.openapi_app("payments_payouts_batch_v1", SHARED)
    assert loader.openapi_app("payments_payouts_batch_v1", SHARED) is a
    assert loader.document("payments_payouts_batch_v1", SHARED) is loader.document("payments_payouts_batch_v1", SHARED)


def test_patch_refuses_a_changed_document(tmp_path):
    folder = tmp_path / "paypal"
    shutil.copytree(SHARED, folder)
    doc = _published(BROKEN)
    doc["tags"][6]["description"] = "changed upstream"
    with pytest.raises(SpecError, match="duplicate-tag-referred-disputes"):
        patches.apply_all(BROKEN, doc)


def test_altered_document_never_reaches_openapi_core(tmp_path):
    folder = tmp_path / "paypal"
    shutil.copytree(SHARED, folder)
    target = folder / "checkout_orders_v2.json"
    target.chmod(0o644)
    target.write_bytes(target.read_bytes()[:-2] + b" }")
    with pytest.raises(SpecError, match="sha256 mismatch"):
        loader.document("checkout_orders_v2", folder)
