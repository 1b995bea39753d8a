"""pytest-tapedeck: each test gets its own tape in one ``tapedeck serve``."""

from .plugin import Tapedeck, tape_name_for, tape_url

__all__ = ["Tapedeck", "tape_name_for", "tape_url"]
