"""guardbench.transport"""
