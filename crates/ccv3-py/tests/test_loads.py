"""The package's JSON-to-Python conversion (used for every returned value) equals json.loads."""

import json

import pytest

from ccv3 import _ccv3

CASES = [
    '{"a": 1, "b": [true, false, null], "c": {"d": "\\u00e9\\ud83d\\ude00\\n\\"x\\""}}',
    '[1.5, -0.0, 1e300, 18446744073709551615, -9223372036854775808, "", {}]',
    '"just a string"',
    '{"k": 1, "k": 2}',
    '[' * 50 + ']' * 50,
]


@pytest.mark.parametrize("text", CASES)
def test_loads_equals_json_loads(text):
    assert _ccv3.loads(text) == json.loads(text)


def test_loads_rejects_bad_json():
    for bad in ["", "{", "[1,]", "nan", "1 2"]:
        with pytest.raises(ValueError):
            _ccv3.loads(bad)
