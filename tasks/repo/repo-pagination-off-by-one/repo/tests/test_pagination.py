import pytest

from catalog.errors import CatalogError, PageNotFound
from catalog.pagination import page_count, paginate


@pytest.mark.parametrize(
    "total, per_page, expected",
    [(0, 10, 1), (5, 10, 1), (20, 10, 2), (11, 10, 2), (21, 10, 3), (25, 10, 3)],
)
def test_page_count(total, per_page, expected):
    assert page_count(total, per_page) == expected


def test_middle_page():
    page = paginate(list(range(20)), page=2, per_page=5)
    assert page.items == [5, 6, 7, 8, 9]
    assert (page.has_previous, page.has_next) == (True, True)
    assert (page.first_index, page.last_index) == (6, 10)


def test_last_page_of_exact_multiple():
    page = paginate(list(range(20)), page=2, per_page=10)
    assert page.items == list(range(10, 20))
    assert page.has_next is False
    with pytest.raises(PageNotFound):
        paginate(list(range(20)), page=3, per_page=10)


def test_last_partial_page():
    page = paginate(list(range(25)), page=3, per_page=10)
    assert page.items == [20, 21, 22, 23, 24]
    assert page.total_pages == 3
    assert (page.first_index, page.last_index) == (21, 25)


def test_empty_result_has_one_empty_page():
    page = paginate([], page=1, per_page=10)
    assert page.items == []
    assert page.total_pages == 1
    assert (page.first_index, page.last_index) == (0, 0)


@pytest.mark.parametrize("page, per_page", [(0, 10), (1, 0), (1, 101)])
def test_invalid_arguments(page, per_page):
    with pytest.raises(CatalogError):
        paginate(list(range(5)), page=page, per_page=per_page)
