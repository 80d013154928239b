"""Print the requirements of pyproject.toml, one a line: the dependencies and those of the
extras named on the command line (``python .ci/requirements.py test mpi``). The Makefile
installs them into the development venv, which runs gtscript from the checkout."""

import sys
import tomllib
from pathlib import Path

project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
extras = project.get("optional-dependencies", {})
unknown = [e for e in sys.argv[1:] if e not in extras]
if unknown:
    sys.exit(f"no such extra in pyproject.toml: {', '.join(unknown)} (there are: {', '.join(extras)})")
print("\n".join([*project["dependencies"], *(d for e in sys.argv[1:] for d in extras[e])]))
