"""How a GPU pool starts on GKE: the initial node count per zone its desired size becomes."""

from __future__ import annotations


def initial_nodes_per_zone(desired: int, max_size: int, zones: int) -> int:
    """A regional GKE pool's `initialNodeCount` is per zone (upstream.GKE_NODE_COUNT_PER_ZONE): the desired total
    over the zones, rounded up to reach it, but never so many that the zones together start above maxSize."""
    return min(-(-desired // zones), max_size // zones)
