#!/usr/bin/env bash
# Print the path of a Python >= 3.12 interpreter, or explain what to install.
# Order: $PYTHON, python3.13/python3.12 on PATH, pyenv's versions directory.
set -u
ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }
candidates=()
[ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
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
echo "error: no Python >= 3.12 found (tried \$PYTHON, python3.12+ on PATH, $pyenv_root/versions)." >&2
echo "Install one, e.g. 'pyenv install 3.12' or your distribution's python3.12 package, or run 'make PYTHON=/path/to/python3.12'." >&2
exit 1
