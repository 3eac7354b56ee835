"""The Pulumi program: read config once, compose the environment. All logic lives in stacks/."""

import pulumi

from stacks.config import read_environment
from stacks.environment import build_environment

build_environment(read_environment(), pulumi.get_stack())
