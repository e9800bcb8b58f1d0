"""guardbench.arms"""
