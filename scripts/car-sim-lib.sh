# Sourced by scripts/rss.sh and scripts/startup.sh.
# start_car_sim BINARY: starts `BINARY car-sim` on a free loopback port in the background and returns once
# the port accepts connections; sets $port, and $sim to its PID (the caller kills it).
start_car_sim() {
  port=$((20000 + RANDOM % 20000))
  "$1" car-sim --listen "127.0.0.1:$port" --quiet >/dev/null 2>&1 &
  sim=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
}
