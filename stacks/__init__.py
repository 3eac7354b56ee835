"""Compositions: one region entry -> a cluster with everything on it; one environment -> all regions."""
