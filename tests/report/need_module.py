"""The test scripts' guard for a module they need (matplotlib, numpy): where the python3 first on
PATH lacks it (a pyenv or venv often lacks Debian's), the script runs again under the system's
/usr/bin/python3; where that lacks it too, the test is skipped (exit 77, CTest's skip code)."""

import importlib
import os
import sys


def need(module):
    try:
        importlib.import_module(module)
    except ImportError:
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        print("SKIPPED: no Python with " + module)
        sys.exit(77)
