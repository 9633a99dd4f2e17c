import pytest

from sensorkit.smoothing import ewma, moving_average


def test_moving_average_length_and_values():
    values = [10.0, 12.0, 14.0, 13.0, 11.0, 16.0]
    assert moving_average(values, 3) == pytest.approx([12.0, 13.0, 12.666667, 13.333333])


def test_moving_average_single_window():
    assert moving_average([1.0, 2.0, 6.0], 3) == [3.0]


def test_ewma():
    assert ewma([10.0, 20.0, 20.0], 0.5) == [10.0, 15.0, 17.5]
    with pytest.raises(ValueError):
        ewma([1.0], 0)
