"""Paths shared by the tests: the repository's examples and the shared corpus (optional)."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def examples():
    return EXAMPLES


@pytest.fixture
def corpus():
    if not (CORPUS / "MANIFEST.tsv").is_file():
        pytest.skip(f"no shared corpus at {CORPUS}")
    return CORPUS
