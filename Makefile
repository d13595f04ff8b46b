# Vitrine: the two commands a newcomer needs are `make demo` and `make test`.
SWIFT ?= swift
BIN_RELEASE := .build/release/vitrine
DEMO_DIR := demo-out

.PHONY: all setup build release demo test bench fuzz vm-test man clean

all: build

setup:
	@tools/setup

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release

# Generates a demo catalog with the ffmpeg CLI, plays it headless for 20 s, and writes
# demo-out/preview.mkv plus PNG snapshots.
demo: release
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	@tools/make-demo-catalog $(DEMO_DIR)/catalog >/dev/null
	$(BIN_RELEASE) validate $(DEMO_DIR)/catalog
	$(BIN_RELEASE) run --catalog $(DEMO_DIR)/catalog --output headless --duration 20 \
		--record $(DEMO_DIR)/preview.mkv --snapshot-at 2,6,10,14 --snapshot-dir $(DEMO_DIR)
	@echo
	@echo "demo catalog: $(DEMO_DIR)/catalog"
	@echo "preview:      $(DEMO_DIR)/preview.mkv"
	@echo "snapshots:    $$(ls $(DEMO_DIR)/*.png | tr '\n' ' ')"

test: build
	$(SWIFT) test

bench: release
	@tools/bench

# libFuzzer with AddressSanitizer on the demux/decode path and the manifest reader, FUZZ_SECONDS
# (default 120) each; the corpus is kept in .build/fuzz/corpus. See docs/fuzzing.md.
fuzz: setup
	@tools/fuzz

vm-test: setup
	@tools/vm-test

# The manual page, from docs/vitrine.1.scd (the image installs it as `man vitrine`).
man: setup
	@mkdir -p .build/man
	scdoc < docs/vitrine.1.scd > .build/man/vitrine.1
	@echo "read it with: man -l .build/man/vitrine.1"

clean:
	rm -rf .build $(DEMO_DIR) bench-out
