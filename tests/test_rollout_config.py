"""rollout: config errors, each one line with the key and the fix (the corpus in tests/bad_configs.py covers
the paths; these pin the whole messages)."""

from __future__ import annotations

from tests.harness import apply_ops, config_errors, raw_environment


def errors(env: str, rollout: dict) -> list[str]:
    return config_errors(apply_ops(raw_environment(env), [("set", "rollout", rollout)]))


def test_unknown_region_with_did_you_mean():
    assert errors(
        "prod",
        {
            "waves": [
                {"name": "canary", "regions": ["use1"]},
                {"name": "aws", "regions": ["usw2"]},
                {"name": "gcp", "regions": ["usc-1"]},
            ]
        },
    ) == [
        "rollout.waves[2].regions[0]: did you mean 'usc1'? no region named 'usc-1'; use one of use1, usw2, usc1",
        "rollout.waves: region 'usc1' is in no wave; add it to one of the waves",
    ]


def test_region_in_two_waves():
    assert errors(
        "prod",
        {
            "waves": [
                {"name": "canary", "regions": ["use1"]},
                {"name": "aws", "regions": ["usw2"]},
                {"name": "rest", "regions": ["usw2", "usc1"]},
            ]
        },
    ) == [
        "rollout.waves[2].regions[0]: region 'usw2' already deploys in wave 'aws'; list every region in exactly one wave"
    ]


def test_duplicate_wave_names():
    assert errors(
        "prod",
        {
            "waves": [
                {"name": "canary", "regions": ["use1"]},
                {"name": "canary", "regions": ["usw2"]},
                {"name": "gcp", "regions": ["usc1"]},
            ]
        },
    ) == ["rollout.waves[1].name: duplicate wave name 'canary' (also rollout.waves[0]); wave names must be unique"]


def test_anchor_not_in_the_first_wave():
    assert errors(
        "prod",
        {
            "waves": [
                {"name": "gcp", "regions": ["usc1"]},
                {"name": "aws", "regions": ["use1"]},
                {"name": "west", "regions": ["usw2"]},
            ]
        },
    ) == [
        "rollout.waves[0].regions: the anchor region 'use1' must deploy in the first wave: the anchor holds the tenant "
        "keys and Karmada, every other stack reads it; move use1 into rollout.waves[0]"
    ]


def test_waves_in_a_single_stack_environment():
    assert errors("dev", {"waves": [{"name": "canary", "regions": ["use1"]}]}) == [
        "rollout.waves: the environment deploys as one stack (stacks.layout single), so it has no region waves; "
        "remove rollout.waves or set stacks.layout: perRegion"
    ]


def test_confirm_before_names_a_wave():
    assert errors("prod", {"confirmBefore": ["gcp", "globl"]}) == [
        "rollout.confirmBefore[1]: did you mean 'global'? no wave named 'globl'; use one of canary, aws, gcp, global"
    ]
    assert errors("dev", {"confirmBefore": ["global"]}) == [
        "rollout.confirmBefore[0]: no wave named 'global'; use one of environment"
    ]
