"""Extraction: from file bytes to site records.

``runner`` (one file in, one result out, never an exception) plans with the
standard library's ``ast``, mines with libcst (``cst_visitor``) and falls back
to ``ast_fallback`` for what libcst rejects; both walkers share ``rules``
(messages, raises, bindings, scopes, guards, exits) and ``template``; ``text`` decodes
and normalises source; ``limits`` holds the size, nesting and recursion limits.
"""
