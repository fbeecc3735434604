"""One object made of another's fields of the same names: how the answers translate a request into its use
case's query and a use case's view into the API's schema, instead of copying each field by hand."""

from __future__ import annotations

import functools
from dataclasses import fields
from typing import Any, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


@functools.cache
def _declared(kind: type) -> frozenset[str]:
    # declared fields only: a method of the same name as a field of the other side (SearchRequest's
    # point_filter) is never taken for its value
    if issubclass(kind, BaseModel):
        return frozenset(kind.model_fields)
    return frozenset(f.name for f in fields(kind))


@functools.cache
def _shared(kind: type, source: type) -> frozenset[str]:
    return _declared(kind) & _declared(source)


def from_same_fields(kind: type[T], source: object, **given: Any) -> T:
    """A `kind` of `given` and of the fields `source` declares under the names `kind` declares, as they are:
    a name both sides declare means the same on both, so a field added to both needs no line here."""
    carried = {name: getattr(source, name) for name in _shared(kind, type(source)) if name not in given}
    return kind(**carried, **given)
