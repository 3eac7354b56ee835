"""The plan's YAML files are what PyYAML's own emitter writes, byte for byte, though most are written by libyaml's:
the writer keeps the Python emitter exactly where the two lay the same data out differently."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.plan.artifacts import yaml_text

# The premise compares with libyaml's emitter; a PyYAML built without libyaml writes every document in Python.
needs_libyaml = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML was built without libyaml")


def python_emitter(document: dict) -> str:
    return yaml.safe_dump(document, sort_keys=True)


def libyaml_emitter(document: dict) -> str:
    return yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=True)


PRINTABLE_ASCII = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
# Long runs of words, spaces and YAML's indicators: what an emitter folds, quotes, or (as a long key) writes complex.
TOKENS = st.sampled_from(["a", "word", "1.5", " ", "  ", ": ", "- ", "'", '"', "#", "{", "*", "&", "!", "%", "@", "~"])
LONG = st.lists(TOKENS, min_size=20, max_size=80).map("".join)
SCALARS = (st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))


def documents(text: st.SearchStrategy[str], keys: st.SearchStrategy[str]) -> st.SearchStrategy[dict]:
    values = st.recursive(
        st.one_of(text, *SCALARS),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=8,
    )
    return st.dictionaries(keys, values, min_size=1, max_size=3)


ASCII_TEXT = st.one_of(st.text(PRINTABLE_ASCII, max_size=12), LONG)
ALIKE = documents(ASCII_TEXT, ASCII_TEXT.filter(lambda key: 0 < len(key) < 123))
ANY_TEXT = st.one_of(
    ASCII_TEXT,
    st.text(max_size=12),
    st.lists(st.sampled_from(["é", "\n", "\t", " ", "word"]), max_size=60).map("".join),
)
ANY = documents(ANY_TEXT, st.one_of(ANY_TEXT, st.text(PRINTABLE_ASCII, min_size=120, max_size=130)))
PROPERTY = settings(
    max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@needs_libyaml
@pytest.mark.slow
@PROPERTY
@given(ALIKE)
def test_both_emitters_write_the_same_text_for_printable_ascii_and_keys_under_123_characters(document):
    assert libyaml_emitter(document) == python_emitter(document)


@pytest.mark.slow
@PROPERTY
@given(ANY)
def test_the_writer_writes_the_python_emitters_text_for_any_document(document):
    assert yaml_text(document) == python_emitter(document)


FOLDED_DOUBLE_QUOTED = {"dashboard.json": "{\n " + ", ".join(f'"panel-{i}": {{"x": {i}}}' for i in range(12)) + "\n}"}
DIFFERENT = {
    "a long string with line breaks": FOLDED_DOUBLE_QUOTED,
    "a long string with a tab": {"k": "\t".join(["word"] * 30)},
    "a long string outside ASCII": {"k": " ".join(["café"] * 30)},
    "an empty key": {"": "value"},
    "a key of 123 characters": {"k" * 123: "value"},
    "a key of 128 characters": {"k" * 128: []},
    "a key of 65 characters outside ASCII (130 bytes: libyaml counts bytes)": {"é" * 65: 1},
    "a long string with DEL": {"k": " ".join(["a\x7fb"] * 30)},
}


@needs_libyaml
def test_the_emitters_differ_on_what_the_writer_keeps_python_for():
    for document in DIFFERENT.values():
        assert libyaml_emitter(document) != python_emitter(document)


@needs_libyaml
def test_where_they_differ_the_python_emitters_text_is_written():
    for document in DIFFERENT.values():
        assert yaml_text(document) == python_emitter(document)
    nested = {"metadata": {"name": "x"}, "data": [{"nested": FOLDED_DOUBLE_QUOTED}]}
    assert yaml_text(nested) == python_emitter(nested) != libyaml_emitter(nested)


def test_keys_of_other_types_are_written_as_pyyaml_writes_them():
    for document in ({1: "a"}, {True: "a", None: "b"}, {1.5: ["x"]}):
        assert yaml_text(document) == python_emitter(document)


@needs_libyaml
def test_a_key_of_122_characters_is_simple_in_both():
    document = {"k" * 122: "value"}
    assert yaml_text(document) == libyaml_emitter(document) == python_emitter(document)
    assert not python_emitter(document).startswith("?")
