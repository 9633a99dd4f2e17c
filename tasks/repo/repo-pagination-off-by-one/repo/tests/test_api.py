import pytest

from catalog.api import list_products
from catalog.errors import CatalogError, PageNotFound


def test_first_page_defaults(repo):
    response = list_products(repo, {"category": "kitchen"})
    assert response["total"] == 12
    assert response["total_pages"] == 1
    assert response["per_page"] == 20
    assert [item["sku"] for item in response["items"][:2]] == ["P01", "P03"]
    assert (response["next_page"], response["previous_page"]) == (None, None)


def test_exactly_full_pages(repo):
    response = list_products(repo, {"category": "kitchen", "per_page": "6", "page": "2", "sort": "-price"})
    assert [item["price"] for item in response["items"]] == [1100, 900, 700, 500, 300, 100]
    assert response["total_pages"] == 2
    assert response["next_page"] is None
    assert response["showing"] == "7-12 of 12"


def test_bad_parameters(repo):
    with pytest.raises(CatalogError):
        list_products(repo, {"page": "two"})
    with pytest.raises(CatalogError):
        list_products(repo, {"sort": "weight"})


def test_page_past_the_end(repo):
    with pytest.raises(PageNotFound) as excinfo:
        list_products(repo, {"per_page": "10", "page": "4"})
    assert excinfo.value.status == 404


def test_second_page_links_to_the_last(repo):
    response = list_products(repo, {"per_page": "10", "page": "2"})
    assert response["total_pages"] == 3
    assert response["next_page"] == 3
    assert response["showing"] == "11-20 of 23"


def test_last_page_lists_the_remaining_products(repo):
    response = list_products(repo, {"per_page": "10", "page": "3"})
    assert [item["sku"] for item in response["items"]] == ["P21", "P22", "P23"]
    assert response["previous_page"] == 2
    assert response["showing"] == "21-23 of 23"
