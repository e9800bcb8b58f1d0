"""guardbench.mutate: does the evidence notice a removed safeguard?

``registry`` lists every safeguard (marked ``# safeguard: NAME`` in the source) with what it
prevents and the tests expected to notice; ``markers`` finds the markers and removes one marked
statement; ``harness`` runs each mutant in a fresh copy (tests and scripted bench), after
checking the unmutated copy twice and two controls; ``report`` writes the table, Markdown and
JSON. The command is ``guardbench mutate`` (guardbench/cli/mutate.py).
"""
