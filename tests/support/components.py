"""Components the tests need (MPI libraries, a JVM, a browser, readers).

Under CI (CI=true) a missing component fails the test that needs it: the project's scripts
(`make deps`, scripts/deps/) install every one, so a missing one is a broken install, never a
reason to pass. Outside CI the test is skipped with the command that installs it.
"""

import os
import shutil

import pytest

UNDER_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(ok, what, install="make deps"):
    """Fails (CI) or skips (elsewhere) the calling test unless `ok`; `what` names the component."""
    if ok:
        return
    msg = "%s is missing (installed by `%s`)" % (what, install)
    if UNDER_CI:
        pytest.fail(msg + ": under CI a missing component is a failure", pytrace=False)
    pytest.skip(msg)


def require_tools(*tools, what=None):
    """require() that every command in `tools` is on PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    require(not missing, what or ("command(s) " + ", ".join(missing)))


def require_module(name, what=None):
    """Imports and returns Python module `name`, or require()s it."""
    try:
        return __import__(name)
    except ImportError:
        require(False, what or ("Python package " + name))
