"""One ``stream:`` or named ``streams:`` — the experiment document's stream declarations edited as a whole.

Pure functions from a raw document (the mapping the loader validates) to a new one, so that
each edit is one undo step of the designer's model. Sizes may override streams too
(``sizes.NAME.stream`` / ``sizes.NAME.streams``): every edit carries into them.
"""

from __future__ import annotations

import copy
from typing import Any

from rsp_workbench.errors import UserError


def stream_iris(raw: dict[str, Any]) -> list[str]:
    """The IRIs ``streams:`` declares, in file order (empty for a single ``stream:``)."""
    streams = raw.get("streams")
    return [str(iri) for iri in streams] if isinstance(streams, dict) else []


def checked_new_iri(raw: dict[str, Any], iri: str) -> str:
    """``iri`` without ``<>`` and spaces, if it is not empty and not declared yet (else UserError)."""
    iri = iri.strip().strip("<>").strip()
    if not iri:
        raise UserError("a stream IRI must not be empty", field="streams")
    if iri in stream_iris(raw):
        raise UserError(f"<{iri}> is already declared", field="streams")
    return iri


def with_several_streams(raw: dict[str, Any], iri: str) -> dict[str, Any]:
    """``stream: X`` → ``streams: {iri: X}``, in the sizes too."""
    new = renamed_key(copy.deepcopy(raw), "stream", "streams", {iri: copy.deepcopy(raw["stream"])})
    for _, size in named_sizes(new):
        if "stream" in size:
            converted = renamed_key(size, "stream", "streams", {iri: size["stream"]})
            size.clear()
            size.update(converted)
    return new


def with_one_stream(raw: dict[str, Any]) -> dict[str, Any]:
    """``streams: {IRI: X}`` → ``stream: X``, in the sizes too.

    The single ``stream:`` is read by every window whatever IRI it names, so nothing is lost;
    with two or more streams the user first removes the others (UserError says so).
    """
    iris = stream_iris(raw)
    if len(iris) != 1:
        raise UserError(f"remove streams until one is left ({len(iris)} are declared) to use one stream",
                        field="streams")
    iri = iris[0]
    new = copy.deepcopy(raw)
    for name, size in named_sizes(new):
        overrides = size.get("streams")
        if isinstance(overrides, dict) and set(overrides) - {iri}:
            other = next(key for key in overrides if key != iri)
            raise UserError(f"size {name} overrides stream <{other}>; remove that override first",
                            field=f"sizes.{name}.streams")
    new = renamed_key(new, "streams", "stream", new["streams"][iri])
    for _, size in named_sizes(new):
        overrides = size.get("streams")
        if isinstance(overrides, dict):
            if iri in overrides:
                converted = renamed_key(size, "streams", "stream", overrides[iri])
            else:
                converted = {key: value for key, value in size.items() if key != "streams"}
            size.clear()
            size.update(converted)
    return new


def without_stream(raw: dict[str, Any], iri: str) -> dict[str, Any]:
    """The declared stream ``iri`` and the sizes' overrides of it removed; never the last stream."""
    if len(stream_iris(raw)) == 1:
        raise UserError("the last stream cannot be removed (an experiment reads at least one)", field="streams")
    new = copy.deepcopy(raw)
    del new["streams"][iri]
    for _, size in named_sizes(new):
        if isinstance(size.get("streams"), dict) and iri in size["streams"]:
            del size["streams"][iri]
            if not size["streams"]:
                del size["streams"]
    return new


def with_renamed_stream(raw: dict[str, Any], old: str, new_iri: str) -> dict[str, Any]:
    """The declared stream ``old`` as ``new_iri``, at the same place, in ``streams:`` and in the sizes."""
    new = copy.deepcopy(raw)
    new["streams"] = renamed_key(new["streams"], old, new_iri, new["streams"][old])
    for _, size in named_sizes(new):
        overrides = size.get("streams")
        if isinstance(overrides, dict) and old in overrides:
            size["streams"] = renamed_key(overrides, old, new_iri, overrides[old])
    return new


def named_sizes(raw: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    sizes = raw.get("sizes")
    if not isinstance(sizes, dict):
        return []
    return [(str(name), size) for name, size in sizes.items() if isinstance(size, dict)]


def renamed_key(mapping: dict[str, Any], old: str, new: str, value: Any) -> dict[str, Any]:
    """``mapping`` with key ``old`` replaced by ``new`` (holding ``value``) at the same position."""
    return {(new if key == old else key): (value if key == old else item) for key, item in mapping.items()}
