"""``cli-help``: the help text of ``python -m gtscript`` (or of one of its commands), taken
from the argument parser at build time, so the CLI page cannot drift from the CLI."""

import argparse
import os

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from gtscript.cli import build_parser


class CliHelp(SphinxDirective):
    """``.. cli-help::`` (the top-level help) or ``.. cli-help:: COMMAND``."""

    optional_arguments = 1

    def run(self):
        parser = build_parser()
        if self.arguments:
            commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            name = self.arguments[0]
            if name not in commands.choices:
                raise self.error(f"python -m gtscript has no command {name!r}")
            parser = commands.choices[name]
        # argparse wraps to $COLUMNS: a fixed width makes the page the same everywhere
        old = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "88"
        try:
            text = parser.format_help()
        finally:
            if old is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = old
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app):
    app.add_directive("cli-help", CliHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
