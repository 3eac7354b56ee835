"""The Pulumi program: read config once, build this stack's part of the environment. All logic lives in stacks/."""

import pulumi

from stacks.config import program_mode, read_environment
from stacks.environment import build_stack

build_stack(read_environment(), pulumi.get_stack(), program_mode())
