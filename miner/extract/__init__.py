"""Extraction: from file bytes to site records (libcst, with an ``ast`` planner)."""
