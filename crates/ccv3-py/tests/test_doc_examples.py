"""The examples in the package's docstrings run and give what they show (issue 30: every
exported function has one); crates/ccv3-py/consumer/doctests.py runs them from the repository
root, as scripts/test-packages does."""

import runpy

from conftest import ROOT


def test_docstring_examples(monkeypatch):
    monkeypatch.chdir(ROOT)
    doctests = runpy.run_path(str(ROOT / "crates/ccv3-py/consumer/doctests.py"))
    assert doctests["main"]() == 0
