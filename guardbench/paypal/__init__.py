"""guardbench.paypal"""
