"""The inverted index: postings, the BM25 formula, block maxima, positions, word pairs, builds."""
