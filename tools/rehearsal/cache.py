"""Where the rehearsal's built binaries live: a cache outside git, kept between runs (and between CI runs where the
machine keeps it). `INFERENCE_PLATFORM_CACHE` moves it; otherwise it follows XDG."""

from __future__ import annotations

import json
import os
from pathlib import Path

# The binaries every rehearsal runs (a cluster's control plane, its kwok nodes, Helm); the others are started where a
# release needs them, and reported when absent.
REQUIRED = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "helm")


def cache_dir() -> Path:
    """The project's cache root: $INFERENCE_PLATFORM_CACHE, else $XDG_CACHE_HOME/inference-platform."""
    explicit = os.environ.get("INFERENCE_PLATFORM_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "inference-platform"


def bin_dir() -> Path:
    """The rehearsal's built upstream binaries, one file per binary name."""
    return cache_dir() / "rehearsal" / "bin"


def binary_path(name: str) -> Path:
    return bin_dir() / name


def built_versions() -> dict[str, dict]:
    """name -> what the build recorded (module, version, build seconds, ...); {} before the first build."""
    path = cache_dir() / "rehearsal" / "versions.json"
    return json.loads(path.read_text()) if path.exists() else {}
