#!/usr/bin/env bash
# Runs the README's "Running on several machines" recipes on this one machine, as written
# except for what only a real cluster has: the hosts become 127.0.0.1, the ports free ones,
# and `srun` a stand-in that starts the tasks here with the variables SLURM sets. Each
# worker's output must be exactly its lines of the same pipeline run with --workers.
#   readme_recipes.sh DINPUT_TOOL README
set -euo pipefail
tool=$1
readme=$2
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$tool" "$work/bin/dinput"
export PATH="$work/bin:$PATH"
# No launcher variables from the environment this test runs in.
for v in $(env | sed -n 's/^\(\(DINPUT_\|SLURM_\|OMPI_\|TF_CONFIG\|MASTER_\|RANK\|WORLD_SIZE\|LOCAL_\)[A-Za-z_]*\)=.*/\1/p'); do
  unset "$v"
done

# The stand-in for srun: --nodes=N --ntasks-per-node=M COMMAND... runs N*M tasks here.
cat > "$work/bin/srun" <<'EOF'
#!/usr/bin/env bash
nodes=1 per=1
while [[ $1 == --* ]]; do
  case $1 in
    --nodes=*) nodes=${1#*=} ;;
    --ntasks-per-node=*) per=${1#*=} ;;
  esac
  shift
done
n=$((nodes * per))
for ((r = 0; r < n; r++)); do
  SLURM_PROCID=$r SLURM_NTASKS=$n SLURM_STEP_NUM_TASKS=$n SLURM_LOCALID=$((r % per)) \
    SLURM_STEP_NODELIST=localhost SLURM_JOB_ID=$$ SLURM_STEP_ID=0 "$@" > "out.$r" &
done
wait
EOF
chmod +x "$work/bin/srun"
cd "$work"

# The ```sh blocks of the README section, in order, one file each.
awk '/^## Running on several machines/ {in_section = 1; next}
     in_section && /^## / {exit}
     in_section && /^```sh/ {block++; in_block = 1; next}
     in_block && /^```/ {in_block = 0; next}
     in_block {print > ("recipe." block)}' "$readme"
[[ -f recipe.4 ]] || { echo "FAIL: the README section lost a recipe"; exit 1; }

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# expect WORKERS ARGS...: out.R of every worker R is its lines of run --workers WORKERS ARGS.
expect() {
  local workers=$1
  shift
  dinput run --workers "$workers" "$@" > reference
  for ((r = 0; r < workers; r++)); do
    grep "^{\"worker\":$r," reference > "expected.$r"
    if ! cmp -s "expected.$r" "out.$r"; then
      echo "FAIL: worker $r printed:"; cat "out.$r"; echo "expected:"; cat "expected.$r"
      exit 1
    fi
  done
  rm -f out.*
}

echo "--- one machine: dinput launch"
cat recipe.1
bash recipe.1 > launched
dinput run --workers 4 --devices CPU:0,CPU:1 "range(20).batch(8)" > reference
cmp launched reference || { echo "FAIL: launch differs from --workers 4"; exit 1; }

echo "--- torchrun-style variables"
port=$(free_port)
for r in 0 1; do
  sed -e "s/10\.1\.0\.1/127.0.0.1/; s/29500/$port/; s/RANK=0/RANK=$r/" recipe.2 > "host.$r"
  cat "host.$r"
  bash "host.$r" > "out.$r" &
done
wait
expect 2 --replicas 4 "range(20).batch(8)"

echo "--- SLURM"
port=$(free_port)
sed -e "s/29500/$port/" recipe.3 > slurm
cat slurm
bash slurm
expect 2 --replicas 4 "range(20).batch(8)"

echo "--- TF_CONFIG"
port=$(free_port)
sed -e "s/host[01]:2222/127.0.0.1:$port/g" recipe.4 > "host.0"
sed -e 's/"type": "chief"/"type": "worker"/' "host.0" > "host.1"
for r in 0 1; do
  cat "host.$r"
  bash "host.$r" > "out.$r" &
done
wait
expect 2 --replicas 4 "range(20).batch(8)"
echo "PASS"
