"""`make upgrade-check`: move a pin of an upstream component (see __main__.py and docs/upstream.md)."""
