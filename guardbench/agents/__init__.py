"""guardbench.agents"""
