"""Pinned Helm charts, each with the upstream files its pin and values are checked against.

`upstream_values` / `upstream_chart` are paths under ../shared/upstream (DESIGN.md §6); the
conformance suite asserts the pinned version equals the upstream Chart.yaml version and that
every value we set exists in the chart's defaults, except below the `free_form` globs.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ChartRef:
    name: str
    repository: str  # https:// Helm repository or oci:// registry path (without the chart name)
    version: str
    upstream_chart: str
    upstream_values: str
    free_form: tuple[str, ...] = ()
    # Subchart key -> its upstream values file (values nested under that key are checked against it).
    subcharts: dict[str, str] = field(default_factory=dict)

    @property
    def is_oci(self) -> bool:
        return self.repository.startswith("oci://")


# Filled by the add-on components' capabilities; keyed by chart name.
CHARTS: dict[str, ChartRef] = {}

# Fluid: Dataset / AlluxioRuntime / DataLoad CRDs, the Alluxio runtime controller and the FUSE CSI
# driver [fluid-cloudnative/fluid@v1.0.8:charts/fluid/fluid, FACTS-2.md].
CHARTS["fluid"] = ChartRef(
    name="fluid",
    repository="https://fluid-cloudnative.github.io/charts",
    version="1.0.8",
    upstream_chart="fluid/v1.0.8/chart-fluid.Chart.yaml",
    upstream_values="fluid/v1.0.8/chart-fluid.values.yaml",
)
