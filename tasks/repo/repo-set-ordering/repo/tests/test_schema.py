import pytest

from migrate import Operation, Schema, SchemaError


def build():
    schema = Schema()
    schema.apply(Operation("create_table", "users", columns=(("id", "int"), ("name", "text"))))
    return schema


def test_add_rename_drop_columns():
    schema = build()
    schema.apply(Operation("add_column", "users", columns=(("email", "text"),)))
    schema.apply(Operation("rename_column", "users", column="name", new_name="full_name"))
    schema.apply(Operation("drop_column", "users", column="id"))
    assert schema.columns("users") == [("full_name", "text"), ("email", "text")]


def test_describe_sorts_tables_keeps_column_order():
    schema = build()
    schema.apply(Operation("create_table", "accounts", columns=(("id", "int"),)))
    assert schema.describe() == "accounts(id int)\nusers(id int, name text)"


@pytest.mark.parametrize(
    "kind, table, extra",
    [
        ("create_table", "users", {"columns": (("id", "int"),)}),
        ("add_column", "users", {"columns": (("name", "text"),)}),
        ("add_column", "orders", {"columns": (("id", "int"),)}),
        ("drop_column", "users", {"column": "email"}),
        ("rename_column", "users", {"column": "id", "new_name": "name"}),
        ("drop_table", "orders", {}),
    ],
    ids=["table-exists", "column-exists", "no-table", "no-column", "rename-clash", "drop-missing"],
)
def test_invalid_operations(kind, table, extra):
    schema = build()
    with pytest.raises(SchemaError):
        schema.apply(Operation(kind, table, **extra))
    assert schema.tables() == ["users"]
