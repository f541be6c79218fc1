"""The release repository: a package's release history as a local git repository,
built from its wheels on PyPI (a developer tool, apart from the mining flow).

``build_corpus(dest, versions)`` is the one entry point (``python -m miner corpus``).
Its modules, each importing only those after it:

* :mod:`~miner.corpus.build` orchestrates: orders the versions, reuses, appends to or
  rebuilds the repository at ``dest`` (:func:`build_corpus`, :class:`CorpusBuild`);
* :mod:`~miner.corpus.gitimport` writes the repository with ``git fast-import`` under a
  fixed git environment, inspects an existing destination, resolves tags;
* :mod:`~miner.corpus.wheels` reads a wheel: which files are kept and where they go;
* :mod:`~miner.corpus.pypi` is the package-index client: lists a project's files on a
  PEP 691 JSON index, picks the wheel of a version, downloads it into the cache
  (:func:`default_cache_dir`) with retries and sha256 checks.

Every failure is a :class:`~miner.errors.CorpusError`.
"""

from __future__ import annotations

from miner.corpus.build import CorpusBuild, build_corpus
from miner.corpus.pypi import default_cache_dir
from miner.errors import CorpusError

__all__ = ["CorpusBuild", "CorpusError", "build_corpus", "default_cache_dir"]
