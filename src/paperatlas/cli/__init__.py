"""The ``paperatlas`` command line (click): the entry point and its command groups.

Each command lives in the module of its kind (:mod:`.build`: build, serve, demo; :mod:`.query`: search, show,
related, recommend, topics, edit; :mod:`.trends`; :mod:`.publish`; :mod:`.lists`: the reading list; :mod:`.digest`:
new; :mod:`.check`: check; :mod:`.eval`) and calls one function of the Python API; what they share (``--db``, opening
an atlas, filters, progress bars) is in :mod:`._common`. A damaged atlas found while a command runs, or an output
that would replace the atlas, is one ``Error:`` line (:class:`_Main`). The commands, the built-in ones too, are
added through the plugin door (:mod:`paperatlas.plugins`, hook ``paperatlas_commands``); outside plugins are loaded
before the commands are made, so their readers, formats and backends are among the commands' choices.
"""

from __future__ import annotations

import click

from .. import plugins as _plugins

_plugins.load()  # before the commands are made: their --format/--backend choices include the plugins' records

from .ask import ask_command  # noqa: E402
from .build import build_command, demo_command, serve_command  # noqa: E402
from .check import check_command  # noqa: E402
from .digest import new_command  # noqa: E402
from .eval import eval_group  # noqa: E402
from .lists import list_group  # noqa: E402
from .publish import publish_command  # noqa: E402
from .query import edit_command, recommend_command, related_command, search_command, show_command, topics_command  # noqa: E402
from .schedule import schedule_command  # noqa: E402
from .trends import trends_command  # noqa: E402


class _Main(click.Group):
    """The command group: an atlas found damaged while a command runs is one ``Error:`` line, never a traceback."""

    def invoke(self, ctx: click.Context):
        """Run the command; a :class:`~paperatlas.store.MalformedAtlas` or a refused output becomes a ClickException.

        Raises:
            click.ClickException: (exit 1) The atlas (a value read after it was opened: the reader's tables, a
                stored model, the build history) is damaged; the message is the store's one line. Or an output
                would replace a folder, the atlas or another SQLite database (:class:`paperatlas.files.OutputRefused`:
                ``search --export``, ``list export``, ``schedule --ics``, ``publish``).
        """
        from ..files import OutputRefused
        from ..store.migrations import MalformedAtlas

        try:
            return super().invoke(ctx)
        except (MalformedAtlas, OutputRefused) as e:
            raise click.ClickException(str(e)) from e


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="paperatlas")
def main() -> None:
    """paperatlas: turn a paper listing into a navigable atlas.

    Build an atlas (TL;DRs, keyphrases, topics on a 2-D map, search index) from a listing, then search it,
    read it, find related work, publish it, or serve it as a local web app.

    \b
    Quick start:
      paperatlas build ../shared/seeds/001_2614e1796f49d7fd.txt --db iclr2021.db --venue "ICLR 2021"
      paperatlas search "lottery tickets pruning at initialization" --status Oral,Spotlight
      paperatlas serve
    """


_plugins.register_builtin("paperatlas.cli", paperatlas_commands=lambda: [
    build_command, search_command, show_command, related_command, edit_command, topics_command, trends_command,
    publish_command, serve_command, demo_command, recommend_command, new_command, eval_group, list_group,
    schedule_command, check_command, ask_command])

# every command, the built-in ones and the plugins' (paperatlas_commands), through the same door
for _command in _plugins.collect("paperatlas_commands"):
    main.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
