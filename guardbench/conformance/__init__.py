"""guardbench.conformance"""
