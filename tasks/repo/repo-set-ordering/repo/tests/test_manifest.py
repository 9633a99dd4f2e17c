import pytest

from migrate import ManifestError, Operation, parse_manifest

MANIFEST = """
# core tables
[1 create_users]
create_table users id:int name:text

[2 add_email]
depends: 1
add_column users email:text created:timestamp
rename_column users name full_name

[3 drop_legacy]
drop_column users created
drop_table legacy
"""


def test_parse_manifest_sections():
    migrations = parse_manifest(MANIFEST)
    assert [m.label for m in migrations] == ["1_create_users", "2_add_email", "3_drop_legacy"]
    assert migrations[1].depends_on == (1,)
    assert migrations[0].depends_on == ()


def test_parse_operations():
    second = parse_manifest(MANIFEST)[1]
    assert second.operations[0] == Operation("add_column", "users", columns=(("email", "text"), ("created", "timestamp")))
    assert second.operations[1].describe() == "rename_column users name full_name"
    third = parse_manifest(MANIFEST)[2]
    assert [op.describe() for op in third.operations] == ["drop_column users created", "drop_table legacy"]


@pytest.mark.parametrize(
    "text, lineno",
    [
        ("create_table users id:int", 1),
        ("[1 first]\ncreate_table users", 2),
        ("[1 first]\ncreate_table users id", 2),
        ("[1 first]\nalter users", 2),
        ("[1 first]\ncreate_table t a:int\ndepends: 0", 3),
        ("[1 first]\ndepends: one", 2),
    ],
    ids=["outside-section", "no-columns", "no-type", "unknown-op", "late-depends", "bad-depends"],
)
def test_manifest_errors(text, lineno):
    with pytest.raises(ManifestError) as excinfo:
        parse_manifest(text)
    assert excinfo.value.lineno == lineno
