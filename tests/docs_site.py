"""The documentation site's build for the tests: ``make docs``'s command (``sphinx -W``) in a
subprocess, into a temporary folder, with private Jupyter, IPython and gtscript cache folders,
so that it touches nothing of the user's or of the checkout. tests/conftest.py builds it once
per session (the ``docs_site`` fixture) for tests/docs/test_docs_site.py and
tests/docs/test_docs_browser.py.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def build_site(root):
    """Builds the site into ``root/html`` and returns that folder; fails (an
    AssertionError with Sphinx's messages) on any warning or error of the build."""
    env = dict(os.environ)
    for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"),
                     ("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipython"),
                     ("GTSCRIPT_CACHE_DIR", "gtscript-cache")):
        env[var] = str(root / sub)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env.pop("MPLBACKEND", None)            # the kernel's own (inline) backend
    env["GTSCRIPT_DOCS_EXECUTE"] = "force"  # execute every notebook, whatever a cache holds
    out = root / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(root / "doctrees"), str(DOCS), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    # the kernels' TCP is encrypted (docs/conf.py), so none warns of unencrypted TCP
    assert "running over TCP" not in proc.stderr, proc.stderr[-2000:]
    # the kernels' own chatter on stderr ("[IPKernelApp] ...") is not Sphinx's,
    # nor is libzmq's assertion in a kernel shut down under load (signaler.cpp, seen in about
    # one build in three on a loaded 2-core machine), nor the ZMQ traceback such a kernel's
    # event loop logs (seen once in a full run): the build's status and every notebook's
    # rendered outputs (tests/docs/test_docs_site.py) still tell whether the pages are right
    sphinx_lines = []
    in_kernel_traceback = False
    for line in proc.stderr.splitlines():
        # a kernel's event loop logging a ZMQ socket closed under it at shutdown: its
        # "ERROR:tornado.general:..." line and the traceback after it, up to the ZMQError
        if line.startswith("ERROR:tornado.general:"):
            in_kernel_traceback = True
            continue
        if in_kernel_traceback:
            in_kernel_traceback = not line.startswith("zmq.error.ZMQError")
            continue
        if line.strip() and not line.startswith("[IPKernelApp]") and "src/signaler.cpp" not in line:
            sphinx_lines.append(line)
    assert proc.returncode == 0 and not sphinx_lines, "\n".join(sphinx_lines) or proc.stdout
    return out
