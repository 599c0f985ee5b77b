"""Importers: memories from other systems into kenning.

* :func:`import_mem0`: what mem0's ``Memory.get_all(...)`` returns
  (``{"results": [...]}``, or the bare list of mem0 v1.0);
* :func:`import_table`: JSON lines or CSV through a column mapping
  (``content=text,user=uid,created_at=ts``).

kenning's own lossless export is loaded by :meth:`kenning.Memory.import_jsonl`.
Every importer validates the whole input first (errors name the item and the
field), refuses scopes the importing principal may not write, and writes in one
transaction; a re-import of the same input changes nothing. docs/importing.md
describes the mappings.

>>> from kenning.importers import import_mem0          # doctest: +SKIP
>>> import_mem0(mem, "mem0-alice.json").to_dict()       # doctest: +SKIP
"""

from .base import IMPORT_KEY, ImportReport, Incoming, run_import
from .mem0 import MEM0_SOURCE, import_mem0, read_mem0
from .tabular import FORMATS, TARGETS, import_table, parse_mapping, read_table

__all__ = [
    "FORMATS",
    "IMPORT_KEY",
    "MEM0_SOURCE",
    "TARGETS",
    "ImportReport",
    "Incoming",
    "import_mem0",
    "import_table",
    "parse_mapping",
    "read_mem0",
    "read_table",
    "run_import",
]
