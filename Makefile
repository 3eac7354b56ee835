# Everything bootstraps .venv from the pinned requirements when it is missing or stale:
# a fresh clone needs only Python 3.11+ and make.
ENV ?= dev
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.requirements.stamp
# A local upstream data checkout, only for refreshing conformance/upstream/ (the tests never need it).
UPSTREAM ?= ../shared/upstream

.PHONY: plan check policy-check policy-pack cost-diff preflight rollout rehearsal-preflight rehearse test test-fast rehearsal-test rehearse-options lint format docs bench vendor vendor-check upgrade-check checkov wheel clean rehearsal-tools

$(STAMP): requirements.txt requirements-dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11+ is required (found $$($(PYTHON) --version))"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "setting up $(VENV): installing the pinned requirements-dev.txt (a few minutes the first time, then only when a pin changes)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@

plan: $(STAMP)  ## offline plan of Pulumi.$(ENV).yaml into build/$(ENV)/ (PLAN_FLAGS="--compare BASE/plan.json")
	$(BIN)/python -m tools.plan $(ENV) $(PLAN_FLAGS)

cost-diff: $(STAMP)  ## plan, and what changes against BASE (a plan.json): resources per stack and monthly cost -> build/$(ENV)/changes.md
	@test -n "$(BASE)" || { echo "BASE=<base plan.json> is required"; exit 2; }
	$(BIN)/python -m tools.plan $(ENV) --compare $(BASE)

policy-check: $(STAMP)  ## re-judge a saved plan: PLAN=build/<env>/plan.json (same verdict and exit codes as plan)
	@test -n "$(PLAN)" || { echo "usage: make policy-check PLAN=build/<env>/plan.json"; exit 2; }
	$(BIN)/python -m policies.check $(PLAN)

# The pack as a folder of its own (docs/policy.md): what `pulumi preview --policy-pack $(PACK_OUT)` runs and
# `pulumi policy publish` uploads, with its own virtualenv made from its requirements.txt (left out of the upload).
PACK_OUT ?= build/policy-pack
policy-pack: $(STAMP)  ## the policy pack folder -> $(PACK_OUT): policies/, platform_catalog/, requirements.txt, its venv (PACK_OUT=dir outside the checkout to publish)
	$(BIN)/python -m tools.policy_pack --out $(PACK_OUT)
	@test -x $(PACK_OUT)/venv/bin/python || $(PYTHON) -m venv $(PACK_OUT)/venv
	@cmp -s $(PACK_OUT)/requirements.txt $(PACK_OUT)/venv/.requirements.txt || { \
		echo "installing the pack's requirements.txt into $(PACK_OUT)/venv (a minute the first time)"; \
		$(PACK_OUT)/venv/bin/python -m pip install --quiet --disable-pip-version-check -r $(PACK_OUT)/requirements.txt && \
		cp $(PACK_OUT)/requirements.txt $(PACK_OUT)/venv/.requirements.txt; }

preflight: $(STAMP)  ## read-only AWS checks of Pulumi.$(ENV).yaml: offerings, quotas, reservations, model files
	$(BIN)/python -m tools.preflight $(ENV) $(PREFLIGHT_FLAGS)

rollout: $(STAMP) $(if $(DRY_RUN),,policy-pack)  ## deploy Pulumi.$(ENV).yaml's stacks wave by wave, gated (DRY_RUN=1: no credentials; RESUME=1; FROM_WAVE=name; WAVE=name: that wave only; YES=1; BOOTSTRAP=1: first time, the runners' networks only)
	$(BIN)/python -m tools.rollout $(ENV) $(if $(DRY_RUN),--dry-run) $(if $(RESUME),--resume) $(if $(FROM_WAVE),--from-wave $(FROM_WAVE)) $(if $(WAVE),--wave $(WAVE)) $(if $(YES),--yes) $(if $(BOOTSTRAP),--bootstrap)

rehearsal-preflight: $(STAMP)  ## can this machine rehearse? root, capabilities, commands, memory, disk, namespaces (exit 2 with every fix)
	$(BIN)/python -m tools.rehearsal.preflight

rehearse: plan  ## replay Pulumi.$(ENV).yaml's rollout on local control planes from the pinned upstream binaries (make rehearsal-tools) -> build/$(ENV)/rehearsal.json (UNTIL_WAVE=name)
	$(BIN)/python -m tools.rehearsal $(ENV) $(if $(UNTIL_WAVE),--until-wave $(UNTIL_WAVE))

# One pytest-xdist worker per core; the plans are built once per session and shared by the workers
# (tests/plan_store.py). `test-fast` leaves out the tests marked `plan` (a whole environment evaluated) and `slow`.
PYTEST_PARALLEL := -p xdist -n auto --dist worksteal
# The suite keeps the bytecode of what it imports (__pycache__/, ignored by git) even where PYTHONDONTWRITEBYTECODE is
# set: otherwise every xdist worker, and every command line a test starts, compiles (and pytest re-rewrites) each
# module again, ~3 s of CPU a process.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest
test: $(STAMP)  ## the whole test suite on every core (conformance against the vendored conformance/upstream/ included)
	$(PYTEST) $(PYTEST_PARALLEL)

test-fast: $(STAMP)  ## the tests that evaluate no whole plan and take under a second: seconds, while you work
	$(PYTEST) $(PYTEST_PARALLEL) -m "not plan and not slow and not rehearsal"

rehearsal-test: $(STAMP)  ## the tests that run the rehearsal's upstream binaries (after make rehearsal-tools)
	$(PYTEST) -m rehearsal tests/test_rehearsal_runs.py tests/test_rollout_slo_simulator.py tests/test_rehearsal_helm_wait.py

rehearse-options: $(STAMP)  ## rehearse every documented option the pack is run on (tests/test_rehearsal_options.py; after make rehearsal-tools; ~40 min; some: REHEARSE_OPTION=<pytest -k expression>, e.g. Knative)
	$(PYTEST) -m rehearsal tests/test_rehearsal_options.py $(if $(REHEARSE_OPTION),-k "$(REHEARSE_OPTION)")

bench: $(STAMP)  ## plan and policy speed, SDK overhead, scaling, test-suite time -> build/bench.json
	$(BIN)/python -m tools.bench

rehearsal-tools: $(STAMP)  ## build the rehearsal's pinned upstream binaries into the cache (ENV=<env>: only what it runs; REHEARSAL_TOOLS_FLAGS="--fresh|--force|--only NAME...")
	$(BIN)/python -m tools.rehearsal.build $(if $(filter command line environment,$(origin ENV)),--env $(ENV)) $(REHEARSAL_TOOLS_FLAGS)

# Checkov pins boto3 below requirements-dev.txt's, so it lives in a virtualenv of its own under build/.
CHECKOV_VENV := build/checkov-venv
$(CHECKOV_VENV)/.stamp: requirements-checkov.txt
	@test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-checkov.txt
	@touch $@

check: $(STAMP) $(CHECKOV_VENV)/.stamp  ## all offline checks of Pulumi.$(ENV).yaml, one summary: plan, policy pack, bring-up, Checkov, the rehearsal once built (exit 2: invalid file)
	$(BIN)/python -m tools.check $(ENV) --checkov $(CHECKOV_VENV)/bin/checkov

checkov: $(STAMP) $(CHECKOV_VENV)/.stamp  ## Checkov's Kubernetes checks on build/$(ENV)/manifests and the pods KServe would create (make plan first)
	$(BIN)/python -m tools.checkov_input build/$(ENV) build/checkov-$(ENV)
	$(CHECKOV_VENV)/bin/checkov -d build/checkov-$(ENV) --framework kubernetes --compact --quiet --skip-download

lint: $(STAMP)  ## ruff, the layer contract of DESIGN.md §1 (pyproject.toml [tool.importlinter]) and mypy ([tool.mypy])
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

vendor: $(STAMP)  ## refresh conformance/upstream/ from $(UPSTREAM) (VENDOR_FLAGS="--add PATH --crd PATH=G/V/K")
	$(BIN)/python -m tools.vendor_upstream --from $(UPSTREAM) $(VENDOR_FLAGS)

vendor-check: $(STAMP)  ## fail when conformance/upstream/ is not what $(UPSTREAM) gives
	$(BIN)/python -m tools.vendor_upstream --from $(UPSTREAM) --check

upgrade-check: $(STAMP)  ## what moving COMPONENT's pin to TO changes (FROM=DIR: a local folder; APPLY=1: re-vendor, re-pin, run its tests; docs/upstream.md)
	@test -n "$(COMPONENT)" -a -n "$(TO)" || { echo "usage: make upgrade-check COMPONENT=<vllm|endpoint-picker|DIR of conformance/upstream> TO=<version> [FROM=DIR] [APPLY=1]"; exit 2; }
	$(BIN)/python -m tools.upgrade $(COMPONENT) $(TO) $(if $(FROM),--from $(FROM)) $(if $(PINNED_FROM),--pinned-from $(PINNED_FROM)) $(if $(APPLY),--apply)

docs: $(STAMP)  ## refresh the generated parts of README.md
	$(BIN)/python -m tools.readme

# setuptools stages a build in build/lib and never empties it: a module deleted since the last build would ship.
wheel: $(STAMP)  ## the installable components (components/, stacks/) -> dist/ (examples/ shows a program using them)
	rm -rf build/lib build/bdist.*
	$(BIN)/python -m pip wheel --no-deps --wheel-dir dist .

clean:
	rm -rf build dist .pytest_cache .ruff_cache .mypy_cache
