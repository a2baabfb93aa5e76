"""Runs the examples of the installed ccv3 package's docstrings (issue 30), from the repository
root (they read examples/): every exported function and method must have one, and each must
give the output it shows. Prints a line per docstring tested; exits 1 on a failure.

    cd REPO && python crates/ccv3-py/consumer/doctests.py
"""

import doctest
import inspect
import sys

import ccv3


def public_callables():
    """(name, object) of every exported function, class and public method."""
    for name in ccv3.__all__:
        obj = getattr(ccv3, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj) and obj.__module__ == "ccv3":
            for attr, member in vars(obj).items():
                if not attr.startswith("_"):
                    yield f"{name}.{attr}", member


def main():
    missing = [name for name, obj in public_callables()
               if ">>>" not in (inspect.getdoc(obj.fget if isinstance(obj, property) else obj) or "")]
    for name in missing:
        print(f"doctests: {name} has no example in its docstring", file=sys.stderr)
    result = doctest.testmod(ccv3, optionflags=doctest.ELLIPSIS, verbose=False)
    print(f"doctests: {result.attempted} examples in ccv3's docstrings, {result.failed} failed; "
          f"{len(missing)} exported functions without one")
    return 1 if result.failed or missing or not result.attempted else 0


if __name__ == "__main__":
    sys.exit(main())
