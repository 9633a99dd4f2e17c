"""Every family's own wire fields, gathered (issue 52, item 1). A family whose actions or observations carry fields
no other family has declares them in ``env/families/<name>/fields.py`` (pydantic only: the client imports them) and
names its mixins among the bases of ``FamilyActionFields`` / ``FamilyObservationFields`` here; ``env.wire`` puts
them after the fields every family shares. So a new family adds nothing to ``env.wire``, and clients see one action
and one observation model whatever the family.

A field is declared once: ``refuse_duplicates`` (run by ``env.wire`` on the shared and the family parts) refuses a
field two parts declare, naming both, instead of letting one silently replace the other.
"""

from __future__ import annotations

from pydantic import BaseModel

from env.families.classic.fields import ClassicActionFields, ClassicObservationFields
from env.families.procedural.fields import ProceduralObservationFields
from env.families.repo.fields import RepoObservationFields


class DuplicateField(TypeError):
    """Two parts of one wire model declare the same field."""


def refuse_duplicates(*parts: type[BaseModel]) -> None:
    owner: dict[str, str] = {}
    for part in parts:
        for name in part.model_fields:
            if name in owner:
                raise DuplicateField(f"the wire field {name!r} is declared by both {owner[name]} and {part.__qualname__}: declare it once")
            owner[name] = part.__qualname__


# pydantic puts the last base's fields first: a family's fields come on the wire in the reverse order of these bases.
class FamilyActionFields(ClassicActionFields):
    """The fields of the actions only some families take."""


class FamilyObservationFields(ProceduralObservationFields, RepoObservationFields, ClassicObservationFields):
    """The fields of the observations only some families show."""


def parts(family_fields: type[BaseModel]) -> tuple[type[BaseModel], ...]:
    """The families' parts of ``FamilyActionFields`` or ``FamilyObservationFields``, in their fields' order."""
    return tuple(reversed([b for b in family_fields.__bases__ if b is not BaseModel]))
