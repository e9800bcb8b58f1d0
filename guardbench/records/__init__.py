"""Records: the typed run record, its field checks, and the run folder that holds them."""
