# Sourced by scripts/rss.sh and scripts/startup.sh.
# stop_run_and_car_sim: ends the measured `run` ($run) and the car ($sim), whichever were started, and waits
# for them (for the caller's EXIT trap).
stop_run_and_car_sim() {
  [ -n "${run:-}" ] && kill "$run" 2>/dev/null || true
  [ -n "${sim:-}" ] && kill "$sim" 2>/dev/null || true
  wait 2>/dev/null || true
}
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
