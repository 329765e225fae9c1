#!/usr/bin/env python3
"""Tests of `dinput launch` and of `run` as one worker process of a job (docs/cli.md,
"Several processes").

  launch_case.py --list                         the case names (CMake registers cli.launch.NAME)
  launch_case.py --tool PATH --version V NAME   run one case; exit 0 pass, 1 fail, 77 skipped

parity.CASE reruns run_case.py's case CASE, a `run --workers W` case, as
`launch -n W -- dinput run ...` and expects exactly the same stdout, stderr and exit status.
The other cases start real worker processes on 127.0.0.1 with the variables each launcher
sets. Every case skips (77) in a build without Gloo.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import run_case as rc

SKIP = 77
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def gloo_compiled(tool):
    proc = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60)
    try:
        return bool(json.loads(proc.stdout.splitlines()[1])["gloo"]["compiled"])
    except (IndexError, ValueError, KeyError, TypeError):
        return False


def free_port():
    """A port of 127.0.0.1 that nothing listens on now (the job's worker 0 binds it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def decode(data):
    return data.decode("utf-8", "surrogateescape")


def parse_lines(what, text):
    try:
        return [json.loads(line) for line in text.splitlines()]
    except ValueError as e:
        raise rc.CaseFailure("%s: stdout is not one JSON value per line: %s" % (what, e))


def call(ctx, argv, env=None, timeout=120):
    proc = subprocess.run(argv, capture_output=True, timeout=timeout, cwd=ctx.dir, env=env)
    out, err = decode(proc.stdout), decode(proc.stderr)
    print("$ " + " ".join(argv))
    print("exit status %d\nstdout:\n%sstderr:\n%s" % (proc.returncode, out, err))
    return proc.returncode, out, err


def run_workers(ctx, argv, envs, timeout=120):
    """Starts one process per environment at once, as a launcher would; returns each one's
    (exit status, stdout, stderr) in order."""
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ctx.dir,
                              env=env) for env in envs]
    results = []
    for i, proc in enumerate(procs):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
                p.wait()
            raise rc.CaseFailure("worker process %d did not end within %d s" % (i, timeout))
        results.append((proc.returncode, decode(out), decode(err)))
        print("worker %d: exit status %d\nstdout:\n%sstderr:\n%s" % (i, proc.returncode,
                                                                     results[-1][1], err))
    return results


def clean_env(**variables):
    """This process's environment without any launcher's variables, plus `variables`."""
    prefixes = ("DINPUT_", "SLURM_", "OMPI_", "PMIX_", "TF_CONFIG", "RANK", "WORLD_SIZE",
                "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env.update({k: str(v) for k, v in variables.items()})
    return env


RUN_ARGS = ["--devices", "CPU:0,CPU:1", "range(20).batch(8)"]


def in_process(ctx, workers, args):
    code, out, err = call(ctx, [ctx.tool, "run", "--workers", str(workers)] + args)
    if code != 0 or err:
        raise rc.CaseFailure("the in-process run failed: %d %r" % (code, err))
    return parse_lines("run --workers", out)


def expect_job_output(ctx, results, workers, args):
    """Every worker process succeeded and printed exactly its own lines of the in-process
    run."""
    expected = in_process(ctx, workers, args)
    for rank, (code, out, err) in enumerate(results):
        if code != 0 or err:
            raise rc.CaseFailure("worker %d: exit status %d, stderr %r" % (rank, code, err))
        mine = [line for line in expected if line.get("worker") == rank]
        rc.expect_equal("worker %d's lines" % rank, parse_lines("worker", out), mine)


def children_of(pid):
    """The processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                # The fields after the command name, which may hold spaces, in parentheses.
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return sorted(found)


def pids_matching(marker):
    """The processes whose command line contains `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def expect_gone(marker, within):
    deadline = time.monotonic() + within
    while pids_matching(marker):
        if time.monotonic() > deadline:
            left = pids_matching(marker)
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            raise rc.CaseFailure("processes left behind: %s" % left)
        time.sleep(0.05)


# ---- dinput launch ---------------------------------------------------------------------------


@case
def launch_matches_in_process_workers(ctx):
    """The issue's first check: launch -n 4 prints what --workers 4 prints."""
    for workers, args in ((4, RUN_ARGS), (2, ["--replicas", "4", "--stats", "range(23).batch(6)"]),
                          (3, ["--replicas", "3", "--steps", "2", "range(100).repeat().batch(3)"])):
        code, out, err = call(ctx, [ctx.tool, "launch", "-n", str(workers), "--", "dinput", "run"]
                              + args)
        if code != 0 or err:
            raise rc.CaseFailure("launch: exit status %d, stderr %r" % (code, err))
        # The --stats line without its per-stage timings, which differ between any two runs.
        rc.expect_equal("launch -n %d" % workers,
                        [rc.reader_counts(line) for line in parse_lines("launch", out)],
                        [rc.reader_counts(line) for line in in_process(ctx, workers, args)])


@case
def launch_sets_the_worker_variables(ctx):
    code, out, err = call(ctx, [ctx.tool, "launch", "-n", "3", "--job-id", "my-job", "sh", "-c",
                                "echo $DINPUT_RANK $DINPUT_WORLD_SIZE $DINPUT_LOCAL_RANK "
                                "$DINPUT_LOCAL_WORLD_SIZE $DINPUT_JOB_ID $DINPUT_RDZV_URL"])
    lines = out.splitlines()
    if code != 0 or err or len(lines) != 3:
        raise rc.CaseFailure("expected three lines and status 0")
    for rank, line in enumerate(lines):
        fields = line.split()
        rc.expect_equal("variables of worker %d" % rank, fields[:5],
                        [str(rank), "3", str(rank), "3", "my-job"])
        if not fields[5].startswith("tcp://127.0.0.1:") or fields[5] != lines[0].split()[5]:
            raise rc.CaseFailure("every worker needs the same tcp://127.0.0.1 URL: %r" % fields[5])


@case
def launch_bench_prints_a_line_per_worker(ctx):
    code, out, err = call(ctx, [ctx.tool, "launch", "-n", "2", "--", "dinput", "bench",
                                "--replicas", "2", "range(1000).batch(10)"])
    lines = parse_lines("bench", out)
    if code != 0 or err or len(lines) != 2:
        raise rc.CaseFailure("expected one bench line per worker")
    rc.expect_equal("rows over both workers", sum(line["rows"] for line in lines), 1000)


@case
def launch_pipeline_error_reported_once(ctx):
    """An error in one worker's pipeline fails every worker with its message, shown once; the
    steps before it stay printed, as with --workers."""
    good = rc.tfrecord_bytes([b"%d" % i for i in range(8)])
    bad = bytearray(good)
    bad[rc.record_offsets([b"%d" % i for i in range(8)])[3] + 2] ^= 0xFF
    ctx.write_file("f0.rec", good)
    ctx.write_file("f1.rec", bytes(bad))
    args = ["--replicas", "2", "--policy", "FILE", 'records(["f0.rec","f1.rec"]).batch(1)']
    code_w, out_w, err_w = call(ctx, [ctx.tool, "run", "--workers", "2"] + args)
    code_l, out_l, err_l = call(ctx, [ctx.tool, "launch", "-n", "2", "--", "dinput", "run"] + args)
    if code_w != 1 or not err_w.startswith("DATA_LOSS: "):
        raise rc.CaseFailure("the in-process run must fail with DATA_LOSS")
    rc.expect_equal("exit status", code_l, 1)
    rc.expect_equal("stderr", err_l, err_w)
    rc.expect_equal("stdout", out_l, out_w)


@case
def launch_killed_worker_stops_the_others(ctx):
    """A worker killed with SIGKILL: the others end (here they would sleep a minute), the
    status is 128 + 9, and the line names the worker."""
    marker = "61.%d" % os.getpid()
    started = time.monotonic()
    code, out, err = call(ctx, [ctx.tool, "launch", "-n", "3", "--", "sh", "-c",
                                'if [ "$DINPUT_RANK" = 1 ]; then kill -9 $$; fi; exec sleep ' +
                                marker])
    took = time.monotonic() - started
    rc.expect_equal("exit status", code, 137)
    if not re.fullmatch(r"UNAVAILABLE: dinput launch: worker 1 \(pid \d+\) was killed by "
                        r"signal 9 \(Killed\)\n", err):
        raise rc.CaseFailure("stderr must be one line naming worker 1 and the signal")
    if took > 20:
        raise rc.CaseFailure("the other workers were stopped after %.1f s" % took)
    expect_gone("sleep\0" + marker, 5)


def kill_a_dinput_worker(ctx, pipeline_args):
    """Real dinput workers: SIGKILL worker 2 while all step; the survivors must fail by
    themselves naming it (before the launcher's 5 s grace runs out and it stops them), and
    nothing is left running."""
    proc = subprocess.Popen([ctx.tool, "launch", "-n", "3", "--", "dinput", "run",
                             "--replicas", "3", "--timeout-ms", "30000"] + pipeline_args,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ctx.dir)
    for _ in range(30):  # a few steps of every worker
        proc.stdout.readline()
    workers = children_of(proc.pid)
    if len(workers) != 3:
        proc.kill()
        raise rc.CaseFailure("expected 3 worker processes, found %s" % workers)

    def rank_of(pid):
        with open("/proc/%d/environ" % pid, "rb") as f:
            return [v for v in f.read().split(b"\0") if v.startswith(b"DINPUT_RANK=")][0]
    os.kill([pid for pid in workers if rank_of(pid) == b"DINPUT_RANK=2"][0], signal.SIGKILL)
    started = time.monotonic()
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise rc.CaseFailure("launch did not end within 60 s of a worker's death")
    took = time.monotonic() - started
    err = decode(err)
    print("ended %.2f s after the kill, status %d\nstderr:\n%s" % (took, proc.returncode, err))
    rc.expect_equal("exit status", proc.returncode, 137)
    if "lost its connection to worker 2" not in err:
        raise rc.CaseFailure("the survivors must report that they lost worker 2")
    for pid in workers:
        if os.path.exists("/proc/%d" % pid):
            with open("/proc/%d/stat" % pid) as f:
                if f.read().split()[2] != "Z":
                    raise rc.CaseFailure("worker process %d is still running" % pid)


@case
def launch_dinput_worker_killed_mid_epoch(ctx):
    kill_a_dinput_worker(ctx, ["range(1000000000).batch(3)"])


@case
def launch_dinput_worker_killed_on_an_infinite_pipeline(ctx):
    """Workers of an infinite pipeline exchange nothing per step; the liveness probe finds
    the dead one."""
    kill_a_dinput_worker(ctx, ["--steps", "1000000000", "range(10).repeat().batch(3)"])


@case
def launch_reader_closing_the_pipe_stops_the_workers(ctx):
    proc = subprocess.Popen([ctx.tool, "launch", "-n", "2", "--", "dinput", "run",
                             "--replicas", "2", "range(1000000000).batch(2)"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ctx.dir)
    first = json.loads(proc.stdout.readline())
    rc.expect_equal("first line", first, {"worker": 0, "step": 0, "replicas": [[[0]]]})
    workers = children_of(proc.pid)
    code, err = rc.close_reader_and_wait(proc)
    if code != 0 or err:
        raise rc.CaseFailure("a closed pipe must end the launch quietly with status 0; got %d, %r"
                             % (code, err))
    for pid in workers:
        if os.path.exists("/proc/%d" % pid):
            raise rc.CaseFailure("worker process %d is still there" % pid)


def launch_sleepers(ctx, marker):
    """`launch -n 2 -- sleep MARKER`, once both workers run."""
    proc = subprocess.Popen([ctx.tool, "launch", "-n", "2", "--", "sleep", marker], cwd=ctx.dir)
    deadline = time.monotonic() + 30
    while len(pids_matching("sleep\0" + marker)) < 2:
        if time.monotonic() > deadline:
            proc.kill()
            raise rc.CaseFailure("the workers did not start")
        time.sleep(0.05)
    return proc


@case
def launch_killed_launcher_leaves_no_worker(ctx):
    marker = "62.%d" % os.getpid()
    proc = launch_sleepers(ctx, marker)
    proc.kill()
    proc.wait()
    expect_gone("sleep\0" + marker, 5)


@case
def launch_passes_sigterm_to_the_workers(ctx):
    marker = "63.%d" % os.getpid()
    proc = launch_sleepers(ctx, marker)
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise rc.CaseFailure("launch did not end after SIGTERM")
    rc.expect_equal("exit status", code, 128 + signal.SIGTERM)
    expect_gone("sleep\0" + marker, 5)


@case
def launch_command_that_cannot_run(ctx):
    code, out, err = call(ctx, [ctx.tool, "launch", "-n", "2", "--", "./no-such-program"])
    rc.expect_equal("exit status", code, 127)
    rc.expect_equal("stderr", err, "NOT_FOUND: dinput launch: could not run './no-such-program': "
                    "No such file or directory\n")


@case
def launch_argument_errors(ctx):
    for argv, message in (
            (["launch", "--", "true"],
             "INVALID_ARGUMENT: launch needs -n W, the number of worker processes to start"),
            (["launch", "-n", "2"], "INVALID_ARGUMENT: launch needs the command every worker "
             "runs, e.g. dinput launch -n 4 -- dinput run 'range(8).batch(4)'"),
            (["launch", "-n", "0", "true"],
             "INVALID_ARGUMENT: -n expects an integer from 1 to 1024, got '0'"),
            (["launch", "-n", "2", "--nprocs", "2", "true"],
             "INVALID_ARGUMENT: unknown option --nprocs for 'launch' (did you mean '--nproc'?); "
             "see dinput launch --help"),
            (["run", "--workers", "2", "--rank", "0", "--world-size", "2", "range(2)"],
             "INVALID_ARGUMENT: --workers simulates workers as threads of one process and cannot "
             "be combined with --cluster, --rank, --world-size or --rdzv, which make this process "
             "one worker of a job; use 'dinput launch -n W -- dinput run ...' to start W worker "
             "processes"),
            (["run", "--rank", "0", "range(2)"], "INVALID_ARGUMENT: --rank needs --world-size"),
            (["run", "--rdzv", "tcp://127.0.0.1:1", "range(2)"],
             "INVALID_ARGUMENT: --rdzv needs --rank and --world-size, or --cluster"),
            (["run", "--cluster", "auto", "--rank", "0", "range(2)"],
             "INVALID_ARGUMENT: --cluster reads the rank and world size from the launcher's "
             "variables; give either --cluster or --rank and --world-size"),
            (["run", "--job-id", "x", "range(2)"],
             "INVALID_ARGUMENT: --job-id needs a job: give --cluster, or --rank and --world-size")):
        code, out, err = call(ctx, [ctx.tool] + argv, env=clean_env())
        rc.expect_equal("exit status of %s" % argv, code, 1)
        rc.expect_equal("stderr of %s" % argv, err, message + "\n")
        rc.expect_equal("stdout of %s" % argv, out, "")


@case
def launch_help(ctx):
    code, out, err = call(ctx, [ctx.tool, "launch", "--help"])
    if code != 0 or "launch -n W" not in out or "Options of launch" not in out:
        raise rc.CaseFailure("launch --help must show launch's usage")
    # --help after the command belongs to the command.
    code, out, err = call(ctx, [ctx.tool, "launch", "-n", "1", "sh", "-c", 'echo "$1"', "sh",
                                "--help"])
    rc.expect_equal("echo's output", out, "--help\n")


# ---- run as one worker of a job, with each launcher's variables ------------------------------


@case
def explicit_options_join_a_job(ctx):
    port = free_port()
    argv = lambda r: [ctx.tool, "run", "--rank", str(r), "--world-size", "2", "--rdzv",
                      "tcp://127.0.0.1:%d" % port] + RUN_ARGS
    procs = [subprocess.Popen(argv(r), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=ctx.dir, env=clean_env()) for r in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        results.append((p.returncode, decode(out), decode(err)))
    expect_job_output(ctx, results, 2, RUN_ARGS)


def cluster_job(ctx, source, envs):
    results = run_workers(ctx, [ctx.tool, "run", "--cluster", source] + RUN_ARGS, envs)
    expect_job_output(ctx, results, len(envs), RUN_ARGS)


@case
def cluster_torchrun(ctx):
    port = free_port()
    envs = [clean_env(RANK=r, WORLD_SIZE=2, LOCAL_RANK=r, LOCAL_WORLD_SIZE=2,
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=port, TORCHELASTIC_RUN_ID="t1")
            for r in range(2)]
    cluster_job(ctx, "torchrun", envs)
    port = str(free_port())
    cluster_job(ctx, "auto", [dict(e, MASTER_PORT=port) for e in envs])


@case
def cluster_tf_config(ctx):
    port = free_port()
    cluster = {"chief": ["127.0.0.1:%d" % port], "worker": ["127.0.0.1:1", "127.0.0.1:2"],
               "ps": ["127.0.0.1:3"], "evaluator": ["127.0.0.1:4"]}
    tasks = [("chief", 0), ("worker", 0), ("worker", 1)]

    def envs():
        return [clean_env(TF_CONFIG=json.dumps({"cluster": cluster,
                                                "task": {"type": t, "index": i}}))
                for t, i in tasks]
    cluster_job(ctx, "tf_config", envs())
    cluster["chief"] = ["127.0.0.1:%d" % free_port()]
    cluster_job(ctx, "auto", envs())
    # A ps task reads no input: joining from it is a clear error.
    code, out, err = call(ctx, [ctx.tool, "run", "--cluster", "auto"] + RUN_ARGS, env=clean_env(
        TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "ps", "index": 0}})))
    if code != 1 or not err.startswith("FAILED_PRECONDITION: ") or "ps" not in err:
        raise rc.CaseFailure("a ps task must fail with FAILED_PRECONDITION naming it")


@case
def cluster_slurm(ctx):
    port = free_port()
    envs = [clean_env(SLURM_PROCID=r, SLURM_NTASKS=2, SLURM_STEP_NUM_TASKS=2, SLURM_LOCALID=r,
                      SLURM_STEP_NODELIST="localhost", SLURM_JOB_ID=77, SLURM_STEP_ID=0,
                      DINPUT_RDZV_PORT=port) for r in range(2)]
    cluster_job(ctx, "slurm", envs)
    port = str(free_port())
    cluster_job(ctx, "auto", [dict(e, DINPUT_RDZV_PORT=port) for e in envs])


@case
def cluster_mpi(ctx):
    port = free_port()
    envs = [clean_env(OMPI_COMM_WORLD_RANK=r, OMPI_COMM_WORLD_SIZE=2,
                      OMPI_COMM_WORLD_LOCAL_RANK=r, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
            for r in range(2)]
    cluster_job(ctx, "mpi", envs)


@case
def cluster_explicit_variables(ctx):
    """DINPUT_RANK and DINPUT_WORLD_SIZE alone make `run` join the job (what launch sets)."""
    port = free_port()
    envs = [clean_env(DINPUT_RANK=r, DINPUT_WORLD_SIZE=2,
                      DINPUT_RDZV_URL="tcp://127.0.0.1:%d" % port) for r in range(2)]
    results = run_workers(ctx, [ctx.tool, "run"] + RUN_ARGS, envs)
    expect_job_output(ctx, results, 2, RUN_ARGS)


@case
def cluster_errors_name_the_variable(ctx):
    code, out, err = call(ctx, [ctx.tool, "run", "--cluster", "torchrun"] + RUN_ARGS,
                          env=clean_env(RANK="x", WORLD_SIZE=2))
    if code != 1 or not err.startswith("INVALID_ARGUMENT: ") or "RANK" not in err:
        raise rc.CaseFailure("a malformed RANK must be INVALID_ARGUMENT naming it")
    code, out, err = call(ctx, [ctx.tool, "run", "--cluster", "auto"] + RUN_ARGS, env=clean_env())
    if code != 1 or not err.startswith("NOT_FOUND: "):
        raise rc.CaseFailure("--cluster auto without any launcher's variables must be NOT_FOUND")
    code, out, err = call(ctx, [ctx.tool, "run", "--cluster", "kubernetes"] + RUN_ARGS,
                          env=clean_env())
    if code != 1 or not err.startswith("INVALID_ARGUMENT: ") or "kubernetes" not in err:
        raise rc.CaseFailure("an unknown source must be INVALID_ARGUMENT naming it")


@case
def worker_that_never_arrives_is_named(ctx):
    port = free_port()
    started = time.monotonic()
    code, out, err = call(ctx, [ctx.tool, "run", "--rank", "0", "--world-size", "3", "--rdzv",
                                "tcp://127.0.0.1:%d" % port, "--timeout-ms", "1500"] + RUN_ARGS,
                          env=clean_env())
    took = time.monotonic() - started
    if code != 1 or not err.startswith("DEADLINE_EXCEEDED: ") or "workers 1, 2" not in err:
        raise rc.CaseFailure("a rendezvous nobody joins must be DEADLINE_EXCEEDED naming the "
                             "missing workers 1, 2")
    if took > 30:
        raise rc.CaseFailure("the rendezvous timeout of 1.5 s took %.1f s" % took)


@case
def rendezvous_port_in_use_names_the_address(ctx):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        address = "127.0.0.1:%d" % busy.getsockname()[1]
        code, out, err = call(ctx, [ctx.tool, "run", "--rank", "0", "--world-size", "2",
                                    "--rdzv", "tcp://" + address, "--timeout-ms", "3000"]
                              + RUN_ARGS, env=clean_env())
    if code != 1 or address not in err or len(err.splitlines()) != 1:
        raise rc.CaseFailure("a rendezvous port in use must fail naming %s" % address)


@case
def launched_worker_refuses_workers_option(ctx):
    code, out, err = call(ctx, [ctx.tool, "launch", "-n", "2", "--", "dinput", "run",
                                "--workers", "2"] + RUN_ARGS)
    rc.expect_equal("exit status", code, 1)
    rc.expect_equal("stderr", err, "INVALID_ARGUMENT: --workers simulates workers in one process, "
                    "but DINPUT_RANK/DINPUT_WORLD_SIZE make this process one worker of a job (as "
                    "'dinput launch' starts it); drop --workers\n")


@case
def world_size_one_needs_no_rendezvous(ctx):
    code, out, err = call(ctx, [ctx.tool, "run", "--rank", "0", "--world-size", "1"] + RUN_ARGS,
                          env=clean_env())
    rc.expect_equal("one worker's run", (code, parse_lines("run", out), err),
                    (0, in_process(ctx, 1, RUN_ARGS), ""))


def names():
    parity = ["parity." + name for name, spec in rc.CASES.items()
              if rc.launchable(spec) and not spec.get("needs_gpu")]
    return parity + sorted(CASES)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--tool")
    parser.add_argument("--version", dest="project_version")
    parser.add_argument("case", nargs="?")
    args = parser.parse_args()
    if args.list:
        print(";".join(names()))
        return 0
    if not args.tool or args.case not in names():
        parser.error("need --tool, --version and a known case name")
    if not gloo_compiled(args.tool):
        print("skipped: this build has no Gloo, so no multi-process jobs")
        return SKIP
    if args.case.startswith("parity."):
        return rc.check_case(args.case[len("parity."):], args.tool, args.project_version or "",
                             launch=True)
    with tempfile.TemporaryDirectory() as directory:
        try:
            CASES[args.case](rc.Script(args.tool, directory))
        except rc.CaseFailure as e:
            print("FAILED:\n- %s" % e)
            return 1
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
