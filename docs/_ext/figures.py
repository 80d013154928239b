"""``gtscript-figure``: a figure of docs/_figures/make_figures.py, drawn by this build.

The build draws every figure into its own output folder (``_figures/<name>.svg``) when the
HTML builder starts, from the numbers the pages hold, so no image is committed and none can
fall behind its page; the directive puts one of them into a page::

    ```{gtscript-figure} call-grid
    :alt: what the figure shows, for a reader who cannot see it

    The caption (optional), Markdown.
    ```
"""

import html
import importlib.util
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

FIGURES_DIR = "_figures"


def _make_figures():
    """docs/_figures/make_figures.py, loaded once (it is a script, not a package module)."""
    name = "gtscript_docs_make_figures"
    if name not in sys.modules:
        path = Path(__file__).resolve().parent.parent / "_figures" / "make_figures.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclass looks itself up there
        spec.loader.exec_module(module)
    return sys.modules[name]


class GtscriptFigure(SphinxDirective):
    required_arguments = 1
    has_content = True
    option_spec = {"alt": directives.unchanged_required}

    def run(self):
        name = self.arguments[0]
        if name not in _make_figures().FIGURES:
            raise self.error(f"no figure {name!r} in docs/_figures/make_figures.py")
        if "alt" not in self.options:
            raise self.error(f"gtscript-figure {name}: an :alt: text is required")
        up = "../" * self.env.docname.count("/")
        img = (f'<img src="{up}{FIGURES_DIR}/{name}.svg" alt="{html.escape(self.options["alt"])}"'
               f' class="gtscript-figure" loading="eager">')
        figure = nodes.figure(classes=["gtscript-figure"])
        figure += nodes.raw("", img, format="html")
        if self.content:
            caption = nodes.caption()
            self.state.nested_parse(self.content, self.content_offset, caption)
            # the parser wraps the caption's text in a paragraph: a caption holds inline text
            if len(caption) == 1 and isinstance(caption[0], nodes.paragraph):
                caption = nodes.caption("", "", *caption[0].children)
            figure += caption
        return [figure]


def _draw(app):
    if app.builder.format == "html":
        _make_figures().write_all(Path(app.outdir) / FIGURES_DIR)


def setup(app):
    app.add_directive("gtscript-figure", GtscriptFigure)
    app.connect("builder-inited", _draw)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
