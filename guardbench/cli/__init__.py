"""The command line (cli/main.py); FORCE is the one --force every command that writes files
declares, QUIET the help of the --quiet of every command that shows progress
(guardbench/util/progress.py)."""

FORCE_HELP = ("Write over existing output files, or inside a run folder (a run's runs.jsonl and "
              "manifest.json "
              "are never written over).")
QUIET_HELP = "No progress on standard error (it never goes to standard output)."
