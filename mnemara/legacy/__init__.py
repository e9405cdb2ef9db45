"""Mnemara 0.18 compatibility: recognise its files and convert them in place.

``detect`` says which files of an instance folder still have 0.18's format;
``config018``, ``turns018``, ``perms018`` and ``export018`` convert one format
each; ``migrate`` runs them with a backup first. Nothing here imports a heavy
library except the LanceDB re-index, which goes through :mod:`mnemara.memory.search.rag`.
"""
