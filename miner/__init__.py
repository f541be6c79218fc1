"""Raise-site miner: turns a Python repository at a pinned commit into an error knowledge base."""

__version__ = "0.1.0"
