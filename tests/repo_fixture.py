"""A small repository task written into a temporary folder, for the repository-task tests.

The project ("shop") has a mutable-default bug in Cart.__init__; its tests exercise what the split
verdict must carry faithfully: exceptions with attributes, isinstance, dates, Decimal, bytes,
sets, tuples, iteration, module attributes and monkeypatch.
"""

from __future__ import annotations

import json
from pathlib import Path

from env.patches import make_patch

ERRORS = '''class ShopError(Exception):
    """Base class of the shop's errors."""


class OutOfStock(ShopError):
    def __init__(self, sku):
        super().__init__(f"{sku} is out of stock")
        self.sku = sku
'''

CART = '''import datetime
from decimal import Decimal

from shop.errors import OutOfStock
from shop.prices import price_of

STOCK = {"apple": 3, "pear": 1}


class Cart:
    def __init__(self, owner, items=[]):
        self.owner = owner
        self.items = items

    def add(self, sku, qty=1):
        if STOCK.get(sku, 0) < qty:
            raise OutOfStock(sku)
        self.items.append((sku, qty))
        return self

    def total(self):
        return sum((price_of(sku) * qty for sku, qty in self.items), Decimal("0"))

    def skus(self):
        return {sku for sku, _ in self.items}

    def receipt(self):
        return "\\n".join(f"{sku} x{qty}" for sku, qty in self.items).encode("utf-8")

    def opened(self):
        return datetime.date(2024, 1, 2)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)
'''

PRICES = '''from decimal import Decimal

PRICES = {"apple": Decimal("0.50"), "pear": Decimal("0.75")}


def price_of(sku):
    return PRICES[sku]
'''

TESTS = '''import datetime
from decimal import Decimal

import pytest

import shop.cart as cart_module
from shop import errors
from shop.cart import Cart


def test_new_carts_start_empty():
    Cart("ann").add("apple")
    assert len(Cart("bob")) == 0


def test_total_and_contents():
    cart = Cart("cid", []).add("apple", 2).add("pear")
    assert cart.total() == Decimal("1.75")
    assert list(cart) == [("apple", 2), ("pear", 1)]
    assert cart.skus() == {"apple", "pear"}
    assert cart.receipt() == b"apple x2\\npear x1"
    assert cart.opened() == datetime.date(2024, 1, 2)
    assert isinstance(cart, Cart)


def test_out_of_stock_names_the_item():
    with pytest.raises(errors.OutOfStock) as info:
        Cart("dee", []).add("plum")
    assert info.value.sku == "plum"
    assert str(info.value) == "plum is out of stock"
    assert isinstance(info.value, errors.ShopError)


def test_stock_can_be_patched(monkeypatch):
    monkeypatch.setattr(cart_module, "STOCK", {"plum": 5})
    assert len(Cart("eve", []).add("plum", 5)) == 1
'''

F2P = ["tests/test_cart.py::test_new_carts_start_empty"]
P2P = [
    "tests/test_cart.py::test_total_and_contents",
    "tests/test_cart.py::test_out_of_stock_names_the_item",
    "tests/test_cart.py::test_stock_can_be_patched",
]


def buggy_files() -> dict[str, str]:
    return {
        "shop/__init__.py": '"""A tiny shop."""\n',
        "shop/errors.py": ERRORS,
        "shop/cart.py": CART,
        "shop/prices.py": PRICES,
        "tests/test_cart.py": TESTS,
        "README.md": "# shop\n\nCarts, prices and stock.\n",
    }


def gold_files() -> dict[str, str]:
    files = buggy_files()
    files["shop/cart.py"] = CART.replace("items=[]", "items=None").replace(
        "self.items = items", "self.items = [] if items is None else items"
    )
    return files


def write_task(folder: Path, files: dict[str, str] | None = None, gold: dict[str, str] | None = None, **fields) -> Path:
    """A task folder: task.json, repo/ and gold.patch (fields override task.json)."""
    files = buggy_files() if files is None else files
    gold = gold_files() if gold is None else gold
    for rel, text in files.items():
        path = folder / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "gold.patch").write_text(make_patch(files, gold), encoding="utf-8")
    task = {
        "id": "shop-cart",
        "name": "Carts share their items",
        "family": "repo",
        "difficulty": "easy",
        "tags": ["state-leak"],
        "problem_statement": "A new cart already contains items someone else added.",
        "FAIL_TO_PASS": F2P,
        "PASS_TO_PASS": P2P,
        "max_steps": 12,
    }
    task.update(fields)
    (folder / "task.json").write_text(json.dumps(task, indent=2), encoding="utf-8")
    return folder


# The split-versus-in-process harness of the test_split_*.py files: each writes a library ``lib`` and a test file,
# runs the tests under the verdict (every one must pass split) and again with the library in this process (what plain
# pytest would see).


def split_verdict(runtime, folder: Path, library: str, test_file: str, source: str, names: list[str], hash_seed: int | None = None):
    """The verdict's run of ``names`` (tests of ``source``, written to ``test_file`` beside ``lib``) as FAIL_TO_PASS."""
    from env.project import load_repo_task
    from env.verdict.repo_judge import run_tests

    files = {"lib/__init__.py": library, test_file: source}
    ids = [f"{test_file}::{name}" for name in names]
    task = write_task(folder, files, files, FAIL_TO_PASS=ids, PASS_TO_PASS=[])
    return run_tests(runtime.sandbox, load_repo_task(task), files, hash_seed=hash_seed)


def assert_passes_split(verdict, test: str) -> None:
    assert verdict.outcomes.get(test) == "PASSED", verdict.excerpts.get(test) or verdict.error or verdict.collect_errors
    assert verdict.trust(test) == "split"


def run_in_process(library: str, source: str, filename: str, name: str, tmp_path: Path, monkeypatch) -> None:
    """Test ``name`` of ``source`` called with ``lib`` imported in this process, as plain pytest would run it."""
    import sys

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text(library)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lib", raising=False)
    namespace: dict = {}
    exec(compile(source, str(tmp_path / filename), "exec"), namespace)
    namespace[name]()
