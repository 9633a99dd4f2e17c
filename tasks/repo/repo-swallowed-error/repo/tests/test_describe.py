from svcconf.describe import describe


def test_describe(schema):
    assert describe(schema, prefix="SHOP_") == "\n".join(
        [
            "SHOP_DATABASE_URL (string, required): where the data lives",
            "SHOP_WORKERS (integer, default 4): worker processes",
            "SHOP_DEBUG (boolean, default false)",
            "SHOP_LOG_LEVEL (one of debug|info|warning|error, default info)",
            "SHOP_REQUEST_TIMEOUT (duration, default 30s)",
            "SHOP_ALLOWED_HOSTS (list, default localhost)",
        ]
    )
