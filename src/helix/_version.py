"""The one place Helix's version is written (``pyproject.toml`` carries the same string; a test keeps
them equal). Subpackages import it from here, never from the root package."""

__all__ = ["__version__"]

__version__ = "0.1.0"
