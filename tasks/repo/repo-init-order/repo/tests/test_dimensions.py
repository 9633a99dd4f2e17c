from measure.dimensions import Dimension

LENGTH = Dimension.base("length")
TIME = Dimension.base("time")
MASS = Dimension.base("mass")


def test_algebra():
    speed = LENGTH / TIME
    assert speed.powers == {"length": 1, "time": -1}
    assert (speed * TIME) == LENGTH
    assert (LENGTH ** 2).powers == {"length": 2}


def test_dimensionless():
    assert (LENGTH / LENGTH).dimensionless
    assert str(LENGTH / LENGTH) == "dimensionless"
    assert not LENGTH.dimensionless


def test_str():
    force = MASS * LENGTH / TIME ** 2
    assert str(force) == "length*mass/time^2"
    assert str(TIME ** -1) == "1/time"


def test_equality_and_hash():
    a = Dimension({"length": 1, "time": -1})
    b = LENGTH / TIME
    assert a == b
    assert hash(a) == hash(b)
    assert a != LENGTH
    assert Dimension({"length": 0}) == Dimension()
