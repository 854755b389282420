"""Package discovery for setuptools; everything else is in pyproject.toml.

rapgen's code lives under ``generator/``; its templates, site assets and the base
mkdocs configuration live in the repository's top-level ``templates/`` folder and
are mapped into the package as ``rapgen/templates`` (see ``package-dir`` and
``package-data`` in pyproject.toml), where :mod:`rapgen.resources` finds them.
Discovery is computed here so a new subpackage needs no packaging edit.
"""

from setuptools import find_namespace_packages, find_packages, setup

setup(
    packages=find_packages("generator")
    + ["rapgen.templates"]
    + [f"rapgen.templates.{name}" for name in find_namespace_packages("templates")],
)
