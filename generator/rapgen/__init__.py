"""rapgen: verify, score and publish the RAP benchmark's frozen archive."""

__version__ = "0.1.0"
