"""pytest-tapedeck: each test gets its own tape in one ``tapedeck serve``."""

from .plugin import Tapedeck, names_of, tape_for, tape_url

__all__ = ["Tapedeck", "names_of", "tape_for", "tape_url"]
