"""Parsing definition lines, unit expressions and quantities."""

from __future__ import annotations

import re
from dataclasses import dataclass

from measure.errors import DefinitionError, UnitError

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BASE_RE = re.compile(r"^\[([a-z_]+)\]$")
_FACTOR_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:(?:\^|\*\*)(-?\d+))?$")
_NUMBER_RE = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Definition:
    """One parsed line: ``name = scale expression`` or a base unit."""

    name: str
    scale: float = 1.0
    expression: str = ""
    base_dimension: str | None = None
    aliases: tuple[str, ...] = ()


def parse_unit_expression(text: str) -> list[tuple[str, int]]:
    """``'kg*m/s^2'`` -> ``[('kg', 1), ('m', 1), ('s', -2)]``.

    ``/`` divides by the factor that follows it only; ``1`` may stand for an
    empty numerator as in ``1/s``.
    """
    compact = text.replace(" ", "")
    if not compact:
        raise UnitError("empty unit expression")
    if compact[-1] in "*/":
        raise UnitError(f"unit expression {text!r} ends with an operator")
    factors: list[tuple[str, int]] = []
    for position, (operator, token) in enumerate(re.findall(r"([*/]?)([^*/]+)", compact.replace("**", "^"))):
        if position == 0 and operator:
            raise UnitError(f"unit expression {text!r} starts with an operator")
        if token == "1" and position == 0:
            continue
        match = _FACTOR_RE.match(token)
        if match is None:
            raise UnitError(f"bad unit {token!r} in {text!r}")
        exponent = int(match.group(2) or 1)
        factors.append((match.group(1), -exponent if operator == "/" else exponent))
    return factors


def split_number(text: str) -> tuple[float, str]:
    """``'3.5 km/h'`` -> ``(3.5, 'km/h')``; a missing number means 1."""
    stripped = text.strip()
    match = _NUMBER_RE.match(stripped)
    if match is None:
        return 1.0, stripped
    rest = stripped[match.end():].strip()
    if rest.startswith(("/", "*")):
        rest = "1" + rest
    return float(match.group(0)), rest


def parse_definition(line: str) -> Definition:
    """Parse ``name = [number] expression [; alias: a, b]``."""
    body, _, options = line.partition(";")
    name, sep, rhs = body.partition("=")
    name, rhs = name.strip(), rhs.strip()
    if not sep or not _NAME_RE.match(name) or not rhs:
        raise DefinitionError(f"bad definition {line.strip()!r}")
    aliases: tuple[str, ...] = ()
    if options.strip():
        key, _, values = options.partition(":")
        if key.strip() != "alias":
            raise DefinitionError(f"unknown option {key.strip()!r} in {line.strip()!r}")
        aliases = tuple(alias.strip() for alias in values.split(",") if alias.strip())
        if not all(_NAME_RE.match(alias) for alias in aliases):
            raise DefinitionError(f"bad alias in {line.strip()!r}")
    base = _BASE_RE.match(rhs)
    if base:
        return Definition(name, base_dimension=base.group(1), aliases=aliases)
    scale, expression = split_number(rhs)
    if scale == 0:
        raise DefinitionError(f"unit {name!r} has a zero scale")
    try:
        parse_unit_expression(expression or "1")
    except UnitError as exc:
        raise DefinitionError(str(exc)) from None
    return Definition(name, scale, expression or "1", aliases=aliases)


def parse_definitions(text: str) -> list[Definition]:
    """Every definition of a multi-line text; ``#`` starts a comment."""
    definitions = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            definitions.append(parse_definition(line))
    return definitions
