"""Tests for binary_search. `sol` is your module; each call runs in the sandbox."""


def test_finds_middle_element(sol):
    assert sol.binary_search([1, 3, 5, 7, 9], 5) == 2


def test_finds_first_element(sol):
    assert sol.binary_search([1, 3, 5, 7, 9], 1) == 0


def test_finds_last_element(sol):
    assert sol.binary_search([1, 3, 5, 7, 9], 9) == 4


def test_missing_value_returns_minus_one(sol):
    assert sol.binary_search([1, 3, 5, 7, 9], 4) == -1


def test_empty_list_returns_minus_one(sol):
    assert sol.binary_search([], 3) == -1


def test_single_element_found(sol):
    assert sol.binary_search([42], 42) == 0


def test_single_element_missing(sol):
    assert sol.binary_search([42], 7) == -1


def test_duplicates_return_an_index_of_the_target(sol):
    assert sol.binary_search([2, 2, 2, 2, 2], 2) in (0, 1, 2, 3, 4)
