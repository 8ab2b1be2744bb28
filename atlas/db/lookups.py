"""``field__among=[...]``: membership in a list bound as ONE parameter.

``field__in`` with a thousand ids binds a thousand parameters; with psycopg's client-side binding
every statement is then re-parsed and re-quoted on each call, which cost a forced sync more than
the database work itself. Here the list travels as one array (PostgreSQL: ``= ANY(%s)``) or one
JSON document (SQLite: ``IN (SELECT value FROM json_each(%s))``).
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Field, ForeignObject, Lookup


class Among(Lookup):
    lookup_name = "among"
    prepare_rhs = False

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[Any, ...]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        field = self.lhs.output_field
        items = [field.get_db_prep_value(item, connection) for item in self.rhs]
        if connection.vendor == "postgresql":
            return f"{lhs} = ANY(%s)", (*lhs_params, items)
        return f"{lhs} IN (SELECT value FROM json_each(%s))", (*lhs_params, json.dumps(items))


# Foreign keys keep their own lookups (they do not inherit Field's), so both are registered.
Field.register_lookup(Among)
ForeignObject.register_lookup(Among)
