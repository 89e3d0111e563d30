#!/usr/bin/env bash
# Run strands-robots 0.5.3's own tests of `episode_labels` and `tools/episode_judge`
# against THIS package (docs/compatibility.md). Nothing of upstream's is kept in the
# repository: the source distribution is downloaded from PyPI into a work directory
# outside it, and its test files of those modules run there.
#
#   scripts/upstream_tests.sh                 # work dir: a new temp dir
#   UPSTREAM_WORK=/work/upstream scripts/upstream_tests.sh -k TestSampleFrames
#
# Extra arguments go to pytest. PYTHON picks the interpreter (default: .venv/bin/python,
# which has this package installed editable and strands-agents).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$repo/.venv/bin/python}
work=${UPSTREAM_WORK:-$(mktemp -d)}
version=0.5.3
mkdir -p "$work"
src=$work/strands_robots-$version
if [ ! -d "$src/tests" ]; then
    "$python" -m pip download --quiet --no-deps --no-binary :all: "strands-robots==$version" -d "$work"
    tar xzf "$work/strands_robots-$version.tar.gz" -C "$work"
fi
run=$work/run
rm -rf "$run"
mkdir -p "$run/tools"
cp "$src/tests/test_episode_labels.py" "$run/"
cp "$src/tests/tools/test_episode_judge.py" "$run/tools/"
cp "$src/tests/tools/test_episode_judge_frame_series_completeness.py" "$run/tools/"
cp "$src/tests/tools/test_episode_judge_single_element_state.py" "$run/tools/"
printf '[pytest]\naddopts = -p no:cacheprovider\n' >"$run/pytest.ini"
# The upstream-private modules those tests import are strands_robots.utils (its shared
# flag/number guards, used in the tests' own asserts) and strands_robots.dataset_metadata
# (upstream's metadata-damage reporter, whose own behaviour one control test checks). Load
# upstream's files under those names; every other strands_robots module is this package's.
cat >"$run/conftest.py" <<EOF
import importlib.util
import sys

import strands_robots

for name in ("utils", "dataset_metadata"):
    spec = importlib.util.spec_from_file_location(f"strands_robots.{name}", f"$src/strands_robots/{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"strands_robots.{name}"] = module
    spec.loader.exec_module(module)
EOF
cd "$run"
"$python" -c "import strands_robots, sys; print('strands_robots from', strands_robots.__file__, file=sys.stderr)"
# Two tests monkeypatch episode_judge._decoded_image_blocks, an upstream-private helper this
# package does not have (docs/compatibility.md says why and which of our tests cover what
# they check); they are deselected by name, so the script fails on anything else.
private_seam=tools/test_episode_judge.py::TestSampleFrames
AWS_EC2_METADATA_DISABLED=true exec "$python" -m pytest -q -rfs \
    --deselect "$private_seam::test_image_block_count_and_grouping_are_stated_in_the_text" \
    --deselect "$private_seam::test_every_image_block_is_labelled_with_its_own_camera" \
    "$@" .
