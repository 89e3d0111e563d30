#!/usr/bin/env bash
# Print the path of a Python >= 3.12 interpreter, or explain (once, on stderr) what to install.
#   scripts/find_python.sh            search: $PYTHON, python3.12+ on PATH, pyenv's versions directory
#   scripts/find_python.sh --ok PATH  exit 0 when PATH runs a Python >= 3.12 (silent)
# A $PYTHON that is set but too old is an error (it is never silently replaced by another one).
set -u
ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }
if [ "${1:-}" = "--ok" ]; then if ok "$2"; then exit 0; else exit 1; fi; fi
if [ -n "${PYTHON:-}" ]; then
  if ok "$PYTHON"; then echo "$PYTHON"; exit 0; fi
  version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo "not runnable")
  echo "error: PYTHON=$PYTHON is Python $version; this project needs Python >= 3.12." >&2
  echo "Pass a newer one (make PYTHON=/path/to/python3.12) or leave PYTHON unset to search for one." >&2
  exit 1
fi
candidates=()
for name in python3.12 python3.13 python3.14 python3; do
  p=$(command -v "$name" 2>/dev/null) && candidates+=("$p")
done
pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
for p in $(ls -d "$pyenv_root"/versions/3.1[2-9]*/bin/python 2>/dev/null | sort -V); do
  candidates+=("$p")
done
for p in "${candidates[@]}"; do
  if ok "$p"; then echo "$p"; exit 0; fi
done
echo "error: no Python >= 3.12 found (tried python3.12+ on PATH and $pyenv_root/versions)." >&2
echo "Install one, e.g. 'pyenv install 3.12' or your distribution's python3.12 package, or run 'make PYTHON=/path/to/python3.12'." >&2
exit 1
