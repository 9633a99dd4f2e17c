import pytest

from migrate import MigrationGraph, Runner, SchemaError, parse_manifest

SMALL = """
[1 create_users]
create_table users id:int name:text
[2 create_orders]
create_table orders id:int user_id:int
[3 add_email]
add_column users email:text
[4 add_total]
depends: 2
add_column orders total:int
"""

SERVICE = """
[20240105 create_users]
create_table users id:int name:text

[20240112 create_orders]
create_table orders id:int user_id:int total:int

[20240120 add_email]
add_column users email:text

[20240203 rename_total]
rename_column orders total total_cents

[20240210 add_status]
depends: 20240112
add_column orders status:text
"""


def test_upgrade_small_project():
    runner = Runner(MigrationGraph(parse_manifest(SMALL)))
    assert runner.upgrade() == [1, 2, 3, 4]
    assert runner.schema.describe() == "orders(id int, user_id int, total int)\nusers(id int, name text, email text)"
    assert runner.upgrade() == []


def test_upgrade_to_target_then_rest():
    runner = Runner(MigrationGraph(parse_manifest(SMALL)))
    assert runner.upgrade(target=4) == [2, 4]
    assert runner.pending() == [1, 3]
    assert runner.upgrade() == [1, 3]
    assert runner.history == [2, 4, 1, 3]


def test_status():
    runner = Runner(MigrationGraph(parse_manifest(SMALL)))
    runner.upgrade(target=1)
    assert runner.status() == ["[x] 1_create_users", "[ ] 2_create_orders", "[ ] 3_add_email", "[ ] 4_add_total"]


def test_failed_operation_names_the_migration():
    broken = SMALL + "[5 bad]\nadd_column invoices id:int\n"
    runner = Runner(MigrationGraph(parse_manifest(broken)))
    with pytest.raises(SchemaError) as excinfo:
        runner.upgrade()
    assert str(excinfo.value).startswith("5_bad:")
    assert runner.history == [1, 2, 3, 4]


def test_upgrade_service_with_timestamp_versions():
    runner = Runner(MigrationGraph(parse_manifest(SERVICE)))
    assert runner.upgrade() == [20240105, 20240112, 20240120, 20240203, 20240210]
    assert runner.schema.describe() == (
        "orders(id int, user_id int, total_cents int, status text)\n"
        "users(id int, name text, email text)"
    )


def test_upgrade_existing_database_with_timestamp_versions():
    graph = MigrationGraph(parse_manifest(SERVICE))
    runner = Runner(graph, applied=[20240105])
    runner.schema.apply(graph.get(20240105).operations[0])
    assert runner.upgrade() == [20240112, 20240120, 20240203, 20240210]
    assert runner.status()[-1] == "[x] 20240210_add_status"
