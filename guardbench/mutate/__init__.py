"""guardbench.mutate"""
