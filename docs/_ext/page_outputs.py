"""Pages that show what their examples print: the ``python`` blocks of the pages named in
``gtscript_output_pages`` run at build time, in order, in one namespace per page (as
pytest-markdown-docs runs them, conftest.py), and what each block prints is put under it.

So the error messages docs/troubleshooting.md explains are the ones gtscript raises today,
not copies that could drift. A block that raises fails the build. The page is read again
whenever a file of the gtscript package (or its compiled core) changes.
"""

import contextlib
import io
import linecache
import os
import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError

import gtscript

PACKAGE = Path(gtscript.__file__).resolve().parent


def _run_blocks(app, doctree):
    docname = app.env.docname
    if docname not in app.config.gtscript_output_pages:
        return
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in (".py", ".so"):
            app.env.note_dependency(str(path))
    namespace = {"__name__": "__main__"}
    source = Path(app.env.doc2path(docname))
    page = source.read_text()
    lines = page.splitlines()
    # the examples' file is the page, named as in the repository (docs/troubleshooting.md),
    # not by this machine's path: gtscript's messages quote it, and read the definitions'
    # source from it through linecache
    filename = f"{Path(app.srcdir).name}/{source.relative_to(app.srcdir)}"
    linecache.cache[filename] = (len(page), None, page.splitlines(keepends=True), filename)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="gtscript-docs-") as tmp:
        os.chdir(tmp)  # files an example writes go to a temporary folder
        try:
            for block in list(doctree.findall(nodes.literal_block)):
                if block.get("language") != "python":
                    continue
                out = io.StringIO()
                # compiled at the page's own line numbers, so that gtscript reads a
                # definition's source from the page and its messages quote the page's lines
                text = block.astext()
                if lines[block.line:block.line + 1] != text.splitlines()[:1]:
                    raise ExtensionError(f"{source}:{block.line}: the block's first line is "
                                         f"not on the line after its fence")
                try:
                    code = compile("\n" * block.line + text, filename, "exec",
                                   dont_inherit=True)
                    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                        exec(code, namespace)
                except Exception as exc:
                    raise ExtensionError(f"{source}:{block.line}: the example raised "
                                         f"{type(exc).__name__}: {exc}") from exc
                printed = out.getvalue().rstrip()
                if printed:
                    output = nodes.literal_block(printed, printed, language="text",
                                                 classes=["gtscript-output"])
                    block.parent.insert(block.parent.index(block) + 1, output)
        finally:
            os.chdir(cwd)
            linecache.cache.pop(filename, None)


def setup(app):
    app.add_config_value("gtscript_output_pages", [], "env")
    app.connect("doctree-read", _run_blocks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
