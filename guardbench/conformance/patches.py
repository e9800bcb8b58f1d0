"""The named fixes applied to PayPal's published documents at load time (see paypal/doc_patches.py).

They live below the stand-in, which loads the same documents; re-exported here for conformance/.
"""
from guardbench.paypal.doc_patches import PATCHES, Patch, apply, apply_all, patches_for  # noqa: F401
