"""guardbench.report"""
