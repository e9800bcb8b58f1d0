"""The case corpus: benign tasks and attacks, as data (cases/*.yaml) plus this loader."""
from guardbench.cases.load import (
                                   ADVERSARIAL,
                                   FAMILIES,
                                   Action,
                                   Case,
                                   Variant,
                                   case_files,
                                   cases_hash,
                                   load_cases,
                                   parse_case_file,
)

__all__ = ["ADVERSARIAL", "FAMILIES", "Action", "Case", "Variant", "case_files", "cases_hash",
           "load_cases", "parse_case_file"]
