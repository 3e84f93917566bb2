cd /tmp/k2run
for run in 70b-a:llama3-70b 8b-a:llama3-8b 70b-b:llama3-70b; do
  tag=${run%%:*}; model=${run##*:}
  uptime > vm-$tag.load
  /usr/lib/jvm/temurin-25-jdk-amd64/bin/java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -cp "mori4j-bench-0.1.0-SNAPSHOT.jar:lib/*" org.mori4j.bench.Mori4jCommand kv-bench --backend tcp --model $model --tokens 4096 --mode stream --naive-iters 0 --iters 12 --warmup 2 --json vm-$tag.json > vm-$tag.txt 2>&1
  uptime >> vm-$tag.load
done
