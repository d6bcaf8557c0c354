"""A page of hits: exact top-k, block-max pruning, and the compiled kernel (csrc/)."""
