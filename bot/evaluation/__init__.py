"""Measuring the search (BEIR collections, known-item sets, trec_eval metrics); no serving
code imports it."""
