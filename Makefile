# Convenience targets; the README's commands are the scripts themselves (bash is always there,
# make may not be on a fresh machine).
.PHONY: demo test build deps
demo:
	bash scripts/demo
test:
	bash scripts/test
build:
	bash scripts/build
deps:
	bash scripts/deps
