"""guardbench.scoring"""
