"""Privacy layers and audiences, read from the policy alone.

Every write takes the policy's default layer unless it names one: facts
(`ordinance assert`, `load`, the server), the gate's decisions and the
receipts `guard` writes. Projections (`ordinance.project`) evaluate an
audience's view over the layers it sees.

The stdlib `layers` module declares `layer(Name, Rank)`, `sees(Audience,
Layer)` and `default_layer(Name)`. They are evaluated over the policy's own
facts and rules with no stored facts at all, so nothing written to the store
can widen what an audience sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import ProjectionError
from ..engine import evaluate
from ..rules.checked import CheckedProgram

__all__ = ["Layers", "PUBLIC"]

PUBLIC = "public"


@dataclass(frozen=True)
class Layers:
    """The layers a policy declares, who sees which, and the default layer."""

    ranks: dict[str, int]
    sees: dict[str, frozenset[str]]
    default: str

    @classmethod
    def of(cls, policy: CheckedProgram) -> Layers:
        if "layer" not in policy.relations:
            return cls({PUBLIC: 0}, {PUBLIC: frozenset({PUBLIC})}, PUBLIC)
        model = evaluate(policy, {}, now=0)
        ranks = {str(name): int(rank) for name, rank in model.tuples("layer")}
        sees: dict[str, set[str]] = {}
        for audience, layer in model.tuples("sees") if "sees" in policy.relations else ():
            sees.setdefault(str(audience), set()).add(str(layer))
        defaults = (
            sorted(str(d) for (d,) in model.tuples("default_layer")) if "default_layer" in policy.relations else []
        )
        if len(defaults) > 1:
            raise ProjectionError(
                f"the policy names {len(defaults)} default layers: `{'`, `'.join(defaults)}`", code="bad_layers"
            )
        default = defaults[0] if defaults else PUBLIC
        if default not in ranks:
            raise ProjectionError(f"the default layer `{default}` is not a declared layer", code="bad_layers")
        return cls(ranks, {a: frozenset(ls) for a, ls in sees.items()}, default)

    def require(self, layer: str) -> str:
        """`layer`, if the policy declares it; else a `unknown_layer` error."""
        if layer not in self.ranks:
            raise ProjectionError(
                f"layer `{layer}` is not declared by the policy (layers: {', '.join(self.names())})",
                code="unknown_layer",
            )
        return layer

    def visible(self, audience: str | None) -> frozenset[str] | None:
        """The layers `audience` may see; None (every layer) for no audience."""
        if audience is None:
            return None
        if audience not in self.sees:
            raise ProjectionError(
                f"audience `{audience}` is not declared by the policy (audiences: {', '.join(sorted(self.sees))})",
                code="unknown_audience",
            )
        return self.sees[audience]

    def names(self) -> list[str]:
        return sorted(self.ranks, key=lambda n: (self.ranks[n], n))
