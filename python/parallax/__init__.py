"""Parallax's Python package."""
