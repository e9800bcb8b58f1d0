"""``python -m guardbench``: the command line (as the ``guardbench`` script)."""
from guardbench.cli.main import main

main()
