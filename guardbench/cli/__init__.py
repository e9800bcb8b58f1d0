"""The command line (cli/main.py); FORCE is the one --force every command that writes files declares."""

FORCE_HELP = ("Write over existing output files, or inside a run folder (a run's runs.jsonl and manifest.json "
              "are never written over).")
