"""Build step pyproject.toml cannot express: mark the generated packages typed (PEP 561).

protoc writes .pyi stubs but no py.typed, and buf's ``clean: true`` would delete one kept in gen/,
so it is written into the build directory instead.
"""

import os

from setuptools import setup
from setuptools.command.build_py import build_py

GENERATED_PACKAGES = ("ahp/v1", "buf/validate")


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        for package in GENERATED_PACKAGES:
            with open(os.path.join(self.build_lib, package, "py.typed"), "w"):
                pass


setup(cmdclass={"build_py": BuildPy})
