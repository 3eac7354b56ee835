"""Regenerate the list prices the catalog takes from SkyPilot's catalog, reduced to the rows it uses:
conformance/upstream/aws-ec2-pricing/skypilot-catalog/vms-on-demand.csv (the AWS Price List) and
conformance/upstream/gcp-compute-pricing/skypilot-catalog/vms-us-central1.csv (GCP's Cloud Billing SKUs).

    python -m tools.price_lists --skypilot-aws VMS_CSV [--check]
    python -m tools.price_lists --skypilot-gcp VMS_CSV [--check]

VMS_CSV is `catalogs/v8/aws/vms.csv` of skypilot-org/skypilot-catalog at COMMIT (Apache-2.0), e.g.
`curl -fsSLO https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/COMMIT/catalogs/v8/aws/vms.csv`.
The reduction keeps the header and, for each (instance type, region) in WANTED, the first row in file order,
verbatim (every availability zone of a region lists the same on-demand `Price`). Reducing the vendored file again
gives the same file, which the tests check. Move the snapshot: download the file at a newer commit, set COMMIT, run
this, review the diff and the catalog's table in components/catalog/prices.py.

GCP: `catalogs/v8/gcp/vms.csv` at GCP_COMMIT. SkyPilot's fetcher (skypilot-org/skypilot,
sky/catalog/data_fetchers/fetch_gcp.py) prices a machine type's row from its vCPU and memory SKUs only, skipping the
GPU SKUs, and lists the GPUs as rows of their own (empty InstanceType; AcceleratorName, AcceleratorCount, Price =
the per-GPU SKU x count): an A2, A3 or G2 machine costs its row plus the row of the GPUs it comes with. The reduction
keeps, in us-central1, the first row of each wanted machine type and of each wanted (accelerator, count).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

from tools.vendor_upstream import MANIFEST, VENDORED_DIR

OUTPUT = "aws-ec2-pricing/skypilot-catalog/vms-on-demand.csv"
REPO = "skypilot-org/skypilot-catalog"
COMMIT = "00148f2af3672e2229b4f7bf8157d5a3f36e3c35"
UPSTREAM_PATH = "catalogs/v8/aws/vms.csv"
# The types the example environments use or the us-east-1 comparison with Karpenter's dated table covers, in both
# AWS regions the examples deploy to.
WANTED_TYPES = (
    "g6.xlarge",
    "g6e.4xlarge",
    "g6e.12xlarge",
    "m7i.2xlarge",
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.48xlarge",
)
WANTED_REGIONS = ("us-east-1", "us-west-2")


GCP_OUTPUT = "gcp-compute-pricing/skypilot-catalog/vms-us-central1.csv"
GCP_COMMIT = "006059e0f18acb1341e22a27751e9f80df6ba92f"
GCP_UPSTREAM_PATH = "catalogs/v8/gcp/vms.csv"
GCP_REGION = "us-central1"
# The GCP types the example environments price on demand in us-central1 (a3-ultragpu-8g is reservation-only there),
# each with the accelerator row GCP bills with it: SkyPilot's GPU name and the machine type's GPU count.
GCP_WANTED: dict[str, tuple[str, int] | None] = {
    "a2-ultragpu-1g": ("A100-80GB", 1),
    "g2-standard-24": ("L4", 2),
    "n2-standard-8": None,
}


class PriceListError(Exception):
    pass


def _first_rows(
    text: str, *, cloud: str, start: str, columns: tuple[str, ...], key: Callable[[dict[str, str]], object | None]
) -> tuple[list[str], set[object]]:
    """The header and the first line of each key in upstream order, lines kept as they are; and the keys seen. A row
    whose key is None is not wanted."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith(start):
        raise PriceListError(f"not a SkyPilot {cloud} vms.csv: no {start}... header")
    header = next(csv.reader([lines[0]]))
    for column in columns:
        if column not in header:
            raise PriceListError(f"no {column} column in the header")
    kept, seen = [lines[0]], set()
    for line in lines[1:]:
        wanted = key(dict(zip(header, next(csv.reader([line])), strict=False)))
        if wanted is not None and wanted not in seen:
            seen.add(wanted)
            kept.append(line)
    return kept, seen


def reduce_rows(text: str) -> str:
    """Header and the first row of each wanted (type, region), in upstream order, lines kept as they are."""
    wanted = {(t, r) for t in WANTED_TYPES for r in WANTED_REGIONS}
    kept, seen = _first_rows(
        text,
        cloud="AWS",
        start="InstanceType,",
        columns=("InstanceType", "Price", "Region"),
        key=lambda row: k if (k := (row["InstanceType"], row["Region"])) in wanted else None,
    )
    missing = sorted(wanted - seen)
    if missing:
        raise PriceListError("no row for " + ", ".join(f"{t} in {r}" for t, r in missing))
    return "\n".join(kept) + "\n"


def prices(text: str) -> dict[tuple[str, str], float]:
    """(instance type, region) -> on-demand USD per hour of a reduced file."""
    return {(r["InstanceType"], r["Region"]): float(r["Price"]) for r in csv.DictReader(io.StringIO(text))}


def reduce_gcp_rows(text: str) -> str:
    """Header and the first us-central1 row of each wanted machine type and accelerator, lines kept as they are."""
    wanted: set[object] = set(GCP_WANTED) | {gpu for gpu in GCP_WANTED.values() if gpu}

    def key(row: dict[str, str]) -> object | None:
        if row["Region"] != GCP_REGION:
            return None
        k = row["InstanceType"] or (row["AcceleratorName"], int(row["AcceleratorCount"] or 0))
        return k if k in wanted else None

    kept, seen = _first_rows(
        text,
        cloud="GCP",
        start="InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,",
        columns=("Region", "Price", "SpotPrice"),
        key=key,
    )
    missing = sorted(str(k) for k in wanted - seen)
    if missing:
        raise PriceListError(f"no {GCP_REGION} row for " + ", ".join(missing))
    return "\n".join(kept) + "\n"


def manifest_entry(text: str) -> dict[str, object]:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return {
        "path": OUTPUT,
        "repo": REPO,
        "ref": f"{UPSTREAM_PATH} (stored snapshot; the file carries no date)",
        "commit": COMMIT,
        "source": f"GENERATED by tools/price_lists.py: header and the first row of each wanted type and region of "
        f"{UPSTREAM_PATH}, verbatim (SkyPilot's fetch of the AWS Price List; `Price` is on-demand Linux USD/hour)",
        "license": "Apache-2.0 (skypilot-org/skypilot-catalog); prices are facts",
        "generator": "tools.price_lists",
        "sha256": digest,
        "upstream_sha256": digest,  # the kept upstream lines are byte for byte the file
        "select": [  # what each kept line is: the header, or a wanted type's row in a wanted region
            "^InstanceType,",
            "^("
            + "|".join(re.escape(t) for t in WANTED_TYPES)
            + "),.*,("
            + "|".join(WANTED_REGIONS)
            + "),[^,]*,[^,]*$",
        ],
    }


def gcp_manifest_entry(text: str) -> dict[str, object]:
    digest = hashlib.sha256(text.encode()).hexdigest()
    gpus = sorted({gpu[0] for gpu in GCP_WANTED.values() if gpu})
    return {
        "path": GCP_OUTPUT,
        "repo": REPO,
        "ref": f"{GCP_UPSTREAM_PATH} (stored snapshot, read 2026-12-02; the file carries no date)",
        "commit": GCP_COMMIT,
        "source": f"GENERATED by tools/price_lists.py: header and the first {GCP_REGION} row of each wanted machine "
        f"type and accelerator of {GCP_UPSTREAM_PATH}, verbatim (SkyPilot's fetch of GCP's Cloud Billing SKUs; "
        "`Price`/`SpotPrice` are on-demand/spot USD/hour, a machine row without its GPUs, a GPU row per count)",
        "license": "Apache-2.0 (skypilot-org/skypilot-catalog); prices are facts",
        "generator": "tools.price_lists",
        "sha256": digest,
        "upstream_sha256": digest,  # the kept upstream lines are byte for byte the file
        "select": [  # the header, a wanted machine type's row, or a wanted accelerator's row, in us-central1
            "^InstanceType,",
            "^(" + "|".join(re.escape(t) for t in sorted(GCP_WANTED)) + f"),.*,{GCP_REGION},[^,]*,[^,]*,[^,]*$",
            "^,,,(" + "|".join(re.escape(g) for g in gpus) + f"),.*,{GCP_REGION},[^,]*,[^,]*,[^,]*$",
        ],
    }


def _write(output: str, text: str, entry: dict[str, object]) -> None:
    target = VENDORED_DIR / output
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    manifest = json.loads((VENDORED_DIR / MANIFEST).read_text())
    entries = [e for e in manifest["files"] if e["path"] != output] + [entry]
    manifest["files"] = sorted(entries, key=lambda e: e["path"])
    (VENDORED_DIR / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"wrote conformance/upstream/{output}: {len(text.splitlines()) - 1} rows")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="price_lists", description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--skypilot-aws", type=Path, metavar="VMS_CSV")
    source.add_argument("--skypilot-gcp", type=Path, metavar="VMS_CSV")
    parser.add_argument("--check", action="store_true", help="fail when the vendored file is not what VMS_CSV gives")
    args = parser.parse_args(argv)
    path, output, reduce, entry = (
        (args.skypilot_aws, OUTPUT, reduce_rows, manifest_entry)
        if args.skypilot_aws
        else (args.skypilot_gcp, GCP_OUTPUT, reduce_gcp_rows, gcp_manifest_entry)
    )
    try:
        text = reduce(path.read_text())
    except (OSError, PriceListError) as exc:
        print(f"error: {path}: {exc}", file=sys.stderr)
        return 2
    if args.check:
        target = VENDORED_DIR / output
        same = target.is_file() and target.read_text() == text
        print(f"conformance/upstream/{output}: {'matches' if same else 'differs from'} the source", file=sys.stderr)
        return 0 if same else 1
    _write(output, text, entry(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
