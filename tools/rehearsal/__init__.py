"""The rehearsal: an environment's rollout replayed on local control planes built from the pinned upstream Go modules."""
