"""The built-in unit definitions and SI prefixes."""

PREFIXES = {
    "G": 1e9,
    "M": 1e6,
    "k": 1e3,
    "h": 1e2,
    "c": 1e-2,
    "m": 1e-3,
    "u": 1e-6,
    "n": 1e-9,
}

DEFAULT_DEFINITIONS = """
# base units
m = [length]; alias: metre, meter
kg = [mass]; alias: kilogram
s = [time]; alias: second, sec
K = [temperature]; alias: kelvin
A = [current]; alias: ampere

# length
inch = 0.0254 m; alias: in
ft = 12 inch; alias: foot, feet
yd = 3 ft; alias: yard
mile = 1760 yd; alias: mi
nmi = 1852 m; alias: nautical_mile

# mass
g = 0.001 kg; alias: gram
lb = 0.45359237 kg; alias: pound
oz = 0.0625 lb; alias: ounce
ton = 2000 lb; alias: short_ton
tonne = 1000 kg; alias: metric_ton

# time
min = 60 s; alias: minute
h = 60 min; alias: hour, hr
day = 24 h; alias: days
week = 7 day

# derived
L = 0.001 m^3; alias: litre, liter, l
gal = 3.785411784 L; alias: gallon
N = kg*m/s^2; alias: newton
J = N*m; alias: joule
W = J/s; alias: watt
Pa = N/m^2; alias: pascal
Hz = 1/s; alias: hertz
kph = km/h
mph = mile/h
knot = nmi/h; alias: kn
"""
