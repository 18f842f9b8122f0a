#!/usr/bin/env bash
# Runs a command against a private single-node Slurm cluster on this machine, then stops it.
#
#   tests/slurm/with-slurm.sh COMMAND [ARGS...]
#
# Writes a slurm.conf under a fresh temporary folder (loopback node, free ports, CPUs and memory
# from this machine; two partitions on that node, `arbor` the default and `arborbuild`, so
# tests can send kinds of job to different partitions), starts a private munged (its own key and socket), slurmctld and slurmd,
# waits until `sinfo` shows the node idle, runs COMMAND with SLURM_CONF exported, and stops every
# daemon it started on exit, whether COMMAND passed, failed or the script was interrupted.
# Exit status: COMMAND's; 77 (ctest's skip code) when Slurm or munge is not installed or this is
# not root (slurmd must start job steps as their user); 1 when the cluster does not come up.
set -uo pipefail

for bin in munged mungekey slurmctld slurmd sinfo srun scontrol; do
  if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
    echo "with-slurm: $bin is not installed (scripts/deps installs slurm-wlm and munge); skipped" >&2
    exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  echo "with-slurm: a private slurmd must run as root; skipped" >&2
  exit 77
fi
export PATH="$PATH:/usr/sbin:/sbin"

dir=$(mktemp -d "${TMPDIR:-/tmp}/arbor-slurm.XXXXXX")
chmod 755 "$dir"
mkdir -p "$dir"/{state,spool,log,munge}
chmod 700 "$dir/munge"

stop_cluster() {
  local status=$?
  if [ -f "$dir/slurm.conf" ]; then
    SLURM_CONF="$dir/slurm.conf" scontrol shutdown >/dev/null 2>&1
  fi
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile" 2>/dev/null)
    [ -n "$pid" ] || continue
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  done
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
    for log in "$dir"/log/*.log; do
      [ -f "$log" ] && { echo "--- tail of $log"; tail -n 20 "$log"; } >&2
    done
  fi
  rm -rf "$dir"
  exit "$status"
}
trap stop_cluster EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Two free TCP ports (bound then released; nothing else here takes ports from this range).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
cpus=$(nproc)
mem_mb=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.8 }' /proc/meminfo)

mungekey -c -f -k "$dir/munge/munge.key" >/dev/null 2>&1 || { echo "with-slurm: mungekey failed" >&2; exit 1; }
chmod 600 "$dir/munge/munge.key"
munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munged.seed" || { echo "with-slurm: munged did not start" >&2; exit 1; }

# batch_sched_delay=0: schedule a batch job (Arbor's builds, checks and profiles) as soon as it
# is submitted, not up to Slurm's default 3 s later (docs/slurm.md: a test-cluster setting).
cat >"$dir/slurm.conf" <<CONF
ClusterName=arbortest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MpiDefault=none
KillWait=2
MinJobAge=60
NodeName=arbornode NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=arbor Nodes=arbornode Default=YES MaxTime=INFINITE State=UP
PartitionName=arborbuild Nodes=arbornode Default=NO MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" || { echo "with-slurm: slurmctld did not start" >&2; exit 1; }
slurmd -f "$SLURM_CONF" -N arbornode || { echo "with-slurm: slurmd did not start" >&2; exit 1; }

# Readiness, not a timed assertion: the daemons register within seconds; 120 s is a hang.
ready=0
for _ in $(seq 1 240); do
  if [ "$(sinfo -h -N -p arbor -o '%t' 2>/dev/null)" = "idle" ]; then ready=1; break; fi
  sleep 0.5
done
if [ "$ready" -ne 1 ]; then
  echo "with-slurm: the node did not become idle: $(sinfo -N 2>&1 | tr '\n' ' ')" >&2
  exit 1
fi
echo "with-slurm: cluster up (SLURM_CONF=$SLURM_CONF, $cpus CPUs, ${mem_mb} MB)" >&2
"$@"
