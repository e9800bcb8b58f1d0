"""Statistics: rates and their intervals, clustered by case; the measures tables count; the CI
requirements (``guardbench check``); preregistered hypotheses."""
