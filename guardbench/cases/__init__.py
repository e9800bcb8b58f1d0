"""guardbench.cases"""
