"""Small utilities shared by every stage: output paths, process groups, YAML documents, extras."""
