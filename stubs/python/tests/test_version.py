"""The installed package's version is the project's (the VERSION file)."""
import pathlib

import recoveryd_client

REPO = pathlib.Path(__file__).resolve().parents[3]


def test_package_version_is_the_version_file():
    assert recoveryd_client.__version__ == (REPO / "VERSION").read_text().strip()
