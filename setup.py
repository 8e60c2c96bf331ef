"""Packaging that pyproject.toml cannot say; pyproject.toml holds the metadata and the package data.

The benchmark lives in the top-level assets/ folder, where people edit it, and ships inside the package as
toolemu/assets, so a plain (non-editable) install can run it. pyproject's package discovery cannot map a
subpackage to another folder, so the package list is made here.
"""

from setuptools import find_namespace_packages, setup

ASSETS = ["toolemu.assets", *(f"toolemu.assets.{name}" for name in find_namespace_packages("assets"))]

setup(
    packages=[*find_namespace_packages(include=["toolemu", "toolemu.*"]), *ASSETS],
    package_dir={"toolemu.assets": "assets"},
)
