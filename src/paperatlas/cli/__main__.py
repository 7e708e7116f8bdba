"""``python -m paperatlas.cli``: the same as the ``paperatlas`` command."""

from . import main

main(prog_name="paperatlas")
