#!/usr/bin/env bash
# Dry run of device-command.sh on the VM (no GPU): the bench with host memory on both ends instead of GPU memory,
# without --compare-cpu, straight from the built jar (no rebuild). Usage: BENCH_WRAP="bash .../dry-wrap.sh"
args=(); skip=0
for a in "$@"; do
  if [ $skip = 1 ]; then skip=0; continue; fi
  case "$a" in --compare-cpu) ;; --compare-cpu-rounds) skip=1 ;; gpu) args+=(cpu) ;; *) args+=("$a") ;; esac
done
exec /usr/lib/jvm/temurin-25-jdk-amd64/bin/java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
  -jar bench/target/mori4j-bench-0.1.0-SNAPSHOT.jar "${args[@]}"
