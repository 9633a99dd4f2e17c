import pytest

from sensorkit.window import last_n, sliding, tumbling


def test_sliding_pairs():
    assert sliding([1, 2, 3, 4], 2) == [(1, 2), (2, 3), (3, 4)]


def test_sliding_with_step():
    assert sliding("abcdefg", 3, step=2) == [("a", "b", "c"), ("c", "d", "e"), ("e", "f", "g")]


def test_sliding_shorter_than_window():
    assert sliding([1, 2], 3) == []


def test_tumbling():
    assert tumbling(list(range(7)), 3) == [(0, 1, 2), (3, 4, 5)]
    assert tumbling(list(range(7)), 3, keep_partial=True) == [(0, 1, 2), (3, 4, 5), (6,)]


@pytest.mark.parametrize("n, expected", [(0, []), (2, [4, 5]), (10, [1, 2, 3, 4, 5])])
def test_last_n(n, expected):
    assert last_n([1, 2, 3, 4, 5], n) == expected


def test_invalid_sizes():
    with pytest.raises(ValueError):
        sliding([1, 2, 3], 0)
    with pytest.raises(ValueError):
        sliding([1, 2, 3], 2, step=0)
    with pytest.raises(ValueError):
        last_n([1], -1)
