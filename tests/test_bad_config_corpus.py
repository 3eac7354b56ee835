"""Every configuration of the corpus (tests/bad_configs.py) is refused, naming its key; the corpus covers
every category the README's config reference has."""

from __future__ import annotations

from collections import Counter

import pytest

from components.checks.loader import load_environment
from components.config.base import ConfigError
from tests.bad_configs import CORPUS, Bad
from tests.harness import apply_ops, raw_environment


def test_the_corpus_is_large_ids_unique_and_every_category_has_cases():
    assert len(CORPUS) >= 150
    assert len({b.id for b in CORPUS}) == len(CORPUS)
    per_category = Counter(b.category for b in CORPUS)
    assert set(per_category) >= {
        "types",
        "unknown-keys",
        "duplicates",
        "names",
        "catalog",
        "capacity",
        "tenants",
        "budgets",
        "federation",
        "production",
    }
    assert min(per_category.values()) >= 2


@pytest.mark.parametrize("bad", CORPUS, ids=lambda b: b.id)
def test_refused_naming_the_key(bad: Bad):
    raw = apply_ops(raw_environment(bad.env), bad.ops)
    with pytest.raises(ConfigError) as refused:
        load_environment(raw)
    lines = [str(issue) for issue in refused.value.issues]
    assert all("\n" not in line and ": " in line for line in lines), lines
    matching = [line for line in lines if any(line.startswith(bad.path + sep) for sep in (":", ".", "["))]
    assert matching, f"no line names {bad.path}: {lines}"
    assert any(bad.fragment in line for line in matching), matching
