#!/usr/bin/env bash
# CI's check of the torch releases besides the local one (the main suite runs on torch 2.13):
# the oldest supported release, the newest and 2.5 between them, each on CPython 3.11 in a cached
# venv (scripts/test-torch.sh). A focused subset keeps CI inside its time limit; the whole torch suite
# per release is `scripts/test-torch.sh VERSION`, and its table is docs/torch-versions.md.
set -euo pipefail
cd "$(dirname "$0")/.."
CORE="tests/torch/test_seed_example.py tests/torch/test_adapter.py tests/torch/test_torch_releases.py
      tests/torch/test_guards_and_verify.py tests/torch/test_dump_unavailable.py"
# torch 2.2 adds the dispatcher, the debugger's breakpoints (eager graph, transformed code, bytecode
# listing; the Inductor ones take about 45 s each here and run in the full suite) and the dumps on
# each backend without the structured trace (joint graph, recompilation reasons, guard text), and the
# zoo (2.2 makes resume functions that carry a closure in place: closure_across_breaks,
# super_across_break).
DEBUGGER_22="tests/torch/test_debugger.py::test_breakpoint_in_eager_captured_graph
      tests/torch/test_debugger.py::test_breakpoint_in_transformed_code_listing
      tests/torch/test_debugger.py::test_seed_example_breakpoint_in_transformed_code
      tests/torch/test_debugger_state.py"
DUMPS_22="tests/torch/test_dump_backends.py tests/torch/test_dump_scenarios.py"
bash scripts/test-torch.sh 2.2.2 3.11 -- $CORE tests/test_optimization.py $DEBUGGER_22 $DUMPS_22 \
    tests/torch/test_dynamo_zoo.py
# torch 2.5 is the last release without a compile stance (debug() installs Dynamo's callbacks as
# run-only mode) and records a guard's user line only while the guards log is on.
bash scripts/test-torch.sh 2.5.1 3.11 -- tests/torch/test_adapter.py tests/torch/test_debugger_state.py \
    tests/torch/test_dump_backends.py
bash scripts/test-torch.sh 2.15.0 3.11 -- $CORE tests/torch/test_dynamo_zoo.py tests/test_optimization.py \
    tests/torch/test_install_callbacks_explain.py
