"""`make rollout`: deploy an environment's stacks wave by wave, with gates between waves."""
