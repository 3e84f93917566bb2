#!/usr/bin/env bash
# Packs .device/ for the GPU machine like ../shared/device/pack.sh (which it runs with the same arguments), then
# moves the classes into one archive, .device/classes.tar.xz, and makes .device/run.sh unpack it on first use.
# Why: what a device call carries (tracked files plus .device/) must stay under 64 MiB, and the classes' thousands
# of small files count far more there than their 1.6 MB archive. Usage: bash bench/device-pack.sh [--no-tests]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash ../shared/device/pack.sh "$@"
rm -f .device/classes.tar.xz
tar -C .device -cJf .device/classes.tar.xz classes
rm -rf .device/classes
# unpack before run.sh builds its class path (idempotent; a fresh archive replaces older classes)
python3 - <<'PY'
p = '.device/run.sh'
s = open(p).read()
hook = 'here=$(cd "$(dirname "$0")" && pwd)\n'
unpack = ('[ -d "$here/classes" ] && [ "$here/classes" -nt "$here/classes.tar.xz" ] || '
          '{ rm -rf "$here/classes"; tar -C "$here" -xJf "$here/classes.tar.xz"; touch "$here/classes"; }\n')
assert hook in s, 'pack.sh run.sh layout changed: no "here=" line'
open(p, 'w').write(s.replace(hook, hook + unpack, 1))
PY
echo "device-pack: .device is $(du -sh --apparent-size .device | cut -f1) (classes archived)"
