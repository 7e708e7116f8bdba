"""Persistence: all SQL of paperatlas lives in this package.

The default (and currently only) backend is one SQLite file per atlas.

* :mod:`.sqlite`: papers, topics, embeddings, stored models, metadata, the read-only :class:`Atlas` and the
  build's :func:`atomic_rebuild`;
* :mod:`.fts`: the full-text index ``papers_fts``: its schema, columns, tokenizer, ``bm25()`` weights and statements;
* :mod:`.enrichment`: what the last build generated per paper, for a rebuild to keep;
* :mod:`.resume`: the vectors an interrupted build made, for the next one;
* :mod:`.userdata`: the reader's marks, lists and TL;DR/keyphrase overrides (one write transaction each);
* :mod:`.migrations`: the numbered schema migrations every writable opening applies;
* :mod:`.connection`: opening a file (read-only, or one write transaction on the live file).
"""

from .connection import (
    AtlasNotFound,
    Connection,
    MalformedAtlas,
    connect,
    file_identity,
    require_atlas,
    write_transaction,
)
from .migrations import LATEST as SCHEMA_VERSION
from .migrations import AtlasTooNew, migrate, schema_version
from .sqlite import Atlas, atomic_rebuild, row_to_paper
from .userdata import (
    EDIT_METHOD,
    EDITABLE_FIELDS,
    USER_TABLES,
    add_to_list,
    apply_overrides,
    export_rows,
    get_overrides,
    import_rows,
    like_or_list,
    read_user_rows,
    relink_user_rows,
    remove_from_list,
    set_mark,
    set_overrides,
    show_overrides,
    timestamp,
    update_note,
)

__all__ = ["Atlas", "AtlasNotFound", "AtlasTooNew", "Connection", "EDITABLE_FIELDS", "EDIT_METHOD", "MalformedAtlas",
           "SCHEMA_VERSION", "USER_TABLES", "add_to_list", "apply_overrides", "atomic_rebuild", "connect",
           "export_rows", "file_identity", "get_overrides", "import_rows",
           "like_or_list", "migrate", "read_user_rows", "relink_user_rows",
           "remove_from_list", "require_atlas", "row_to_paper", "schema_version", "set_mark", "set_overrides",
           "show_overrides", "timestamp", "update_note", "write_transaction"]
