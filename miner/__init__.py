"""Raise-site miner: turns a Python repository at a pinned commit into an error knowledge base."""

from pathlib import Path

__version__ = "0.1.0"


def _templates() -> Path:
    """The folder of the Jinja2 templates and the site's static files.

    In an installed wheel it is ``miner/templates`` (the build maps the
    project's top-level ``templates/`` there: ``pyproject.toml``); in a source
    checkout, and in an editable install of one, it is that ``templates/``.
    """
    here = Path(__file__).resolve().parent
    packaged = here / "templates"
    return packaged if packaged.is_dir() else here.parent / "templates"


#: Where the card, index and site templates are (:func:`_templates`).
TEMPLATES = _templates()
