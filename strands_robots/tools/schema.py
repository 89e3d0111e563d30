"""Strict argument types for the judge tools' strands signatures.

strands builds a pydantic model from a tool's type hints and validates a model's
arguments with it before the tool runs. In pydantic's default (lax) mode ``true``
arrives as ``1`` for an ``int`` and ``"yes"`` as ``True`` for a ``bool``, and a ``str``
hint gives the model no vocabulary. These hints make that validation strict and put
the vocabulary into the JSON schema the model reads (``docs/judge.md``, "Tool schemas"):

- :class:`JsonInt`: an integer, not a boolean, float or string (``{"type": "integer"}``).
- :class:`JsonBool`: ``true`` or ``false`` only (``{"type": "boolean"}``).
- :data:`QualityArg`, :data:`FailureModeArg`: ``enum`` of ``QUALITY_GRADES`` /
  ``FAILURE_MODES``.

strands drops ``Annotated`` metadata such as ``pydantic.Strict()``, so the strictness is
carried by the types' own pydantic core schema. A direct Python call of a tool skips
strands' validation; the tools check every argument again themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic_core import core_schema

from strands_robots.episode_labels.vocab import FAILURE_MODES, QUALITY_GRADES

if TYPE_CHECKING:
    # What a validated argument is at run time (the schemas below give Python's int and bool);
    # the classes only carry pydantic's strict schema into the tool's signature.
    JsonInt = int
    JsonBool = bool
else:

    class JsonInt(int):
        """A strict integer argument (``True``, ``1.0`` and ``"1"`` are refused)."""

        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
            return core_schema.int_schema(strict=True)

    class JsonBool(int):
        """A strict boolean argument (``1``, ``"true"`` and ``"yes"`` are refused)."""

        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
            return core_schema.bool_schema(strict=True)


#: ``quality``: one of ``QUALITY_GRADES`` (an ``enum`` in the schema).
QualityArg = Literal[QUALITY_GRADES]  # type: ignore[valid-type]

#: ``failure_mode``: one of ``FAILURE_MODES`` (an ``enum`` in the schema), or null.
FailureModeArg = Literal[FAILURE_MODES]  # type: ignore[valid-type]
