"""guardbench.cli"""
