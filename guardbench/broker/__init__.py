"""guardbench.broker"""
