"""``python -m gtscript``: see :mod:`gtscript.cli`."""

import os
import sys

from .cli import main

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:  # e.g. `python -m gtscript show f.py:s --llvm | head`
    # Python would report the failed flush of stdout at exit: point stdout at /dev/null.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 1
sys.exit(status)
