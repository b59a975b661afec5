"""What the DeepSpeed key rules (DS201-DS205) share: the field a key spells, and the known keys close to an unknown one."""

from __future__ import annotations

import difflib


def canonical_key(section: dict, key: str) -> str:
    return section.get("properties", {}).get(key, {}).get("x-dslint-alias-of", key)


def close_keys(key: str, known: dict[str, dict], section: dict) -> list[str]:
    """Close known keys, one per field (aliases count once), best first."""
    return [name for name, _ in _scored(key, known, section)]


_SCORED: dict[tuple, tuple] = {}


def _scored(key: str, known: dict[str, dict], section: dict) -> list[tuple[str, float]]:
    """The close known keys and their similarity; memoized: a config that many launches use is
    checked once per launch, and difflib is the costly part."""
    cache_key = (key, id(known), id(section))
    hit = _SCORED.get(cache_key)
    if hit is not None and hit[0] is known and hit[1] is section:
        return hit[2]
    if len(_SCORED) > 4096:
        _SCORED.clear()
    out = _score(key, known, section)
    _SCORED[cache_key] = (known, section, out)
    return out


def _score(key: str, known: dict[str, dict], section: dict) -> list[tuple[str, float]]:
    names = [k for k, spec in known.items() if not spec.get("x-dslint-removed")]
    lowered = {k.lower(): k for k in names}
    normalised = key.lower().replace("-", "_").replace(" ", "_")
    if normalised in lowered:
        return [(lowered[normalised], 1.0)]
    scored = []
    for name in names:
        ratio = difflib.SequenceMatcher(None, key, name).ratio()
        if ratio >= 0.75:
            scored.append((name, ratio))
    scored.sort(key=lambda pair: -pair[1])
    out, fields = [], set()
    for name, ratio in scored:
        field = canonical_key(section, name)
        if field in fields:
            continue
        fields.add(field)
        out.append((name, ratio))
    return out[:3]


def closest_key(key: str, known: dict[str, dict], section: dict) -> str | None:
    """The one candidate clearly closer than any other (0.05 ahead), or None."""
    scored = _scored(key, known, section)
    if not scored:
        return None
    if len(scored) == 1 or scored[0][1] - scored[1][1] >= 0.05:
        return scored[0][0]
    return None


def did_you_mean(candidates: list[str]) -> str | None:
    return "did you mean " + " or ".join(f"'{c}'" for c in candidates[:3]) + "?" if candidates else None
