# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Remote start across network namespaces standing in for hosts.

Proxies form a tree (WEFT_MT_DEGREE); every test runs as a chain (degree 1)
and flat. The module creates 3 namespaces, each with its own address in a private
10.66.N.0/24 range, joined by a bridge that carries mpiexec's address, and
removes them afterwards. Proxies start with WEFT_LAUNCHER_CMD='ip netns exec
%h'. What is asserted is the launcher's own behaviour: output, exit codes,
abort, kill -9 of a remote rank or proxy, link down, the job secret. Every
test checks that no process and no /dev/shm entry of the job is left.
Needs root (ip netns); otherwise every test skips saying why.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

from conftest import BUILD, PREFIX, assert_no_job_shm, assert_no_leftovers, marked_pids, probe_lines

HERE = os.path.dirname(os.path.abspath(__file__))
TAG = f"{os.getpid() % 10000}"
SUBNET = 20 + os.getpid() % 200
BRIDGE = f"wftb{TAG}"
HOSTS = [f"wft{TAG}h{i}" for i in range(3)]
ADDR = {h: f"10.66.{SUBNET}.{11 + i}" for i, h in enumerate(HOSTS)}


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30,
                          check=check)


def _teardown():
    for i, h in enumerate(HOSTS):
        _ip("netns", "del", h, check=False)
        _ip("link", "del", f"wfv{TAG}{i}", check=False)
    _ip("link", "del", BRIDGE, check=False)


@pytest.fixture(scope="module")
def hosts():
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (ip netns add)")
    if shutil.which("ip") is None:
        pytest.skip("iproute2 'ip' not installed")
    try:
        _ip("link", "add", BRIDGE, "type", "bridge")
        _ip("addr", "add", f"10.66.{SUBNET}.1/24", "dev", BRIDGE)
        _ip("link", "set", BRIDGE, "up")
        for i, h in enumerate(HOSTS):
            veth = f"wfv{TAG}{i}"
            _ip("netns", "add", h)
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", h)
            _ip("link", "set", veth, "master", BRIDGE, "up")
            _ip("-n", h, "addr", "add", f"{ADDR[h]}/24", "dev", "eth0")
            _ip("-n", h, "link", "set", "eth0", "up")
            _ip("-n", h, "link", "set", "lo", "up")
    except subprocess.CalledProcessError as e:
        _teardown()
        pytest.skip(f"cannot create network namespaces here: {e.stderr.strip()}")
    yield HOSTS
    _teardown()


@pytest.fixture
def clean(marker):
    """Marker for -genv; afterwards no marked process and no /dev/shm entry of
    the test's jobs."""
    yield marker
    assert_no_leftovers(marker)
    assert_no_job_shm(marker)


TREE = {"degree": "32"}


@pytest.fixture(autouse=True, params=["1", "32"], ids=["chain", "flat"])
def tree_degree(request):
    """Every test runs with the proxies as a chain (WEFT_MT_DEGREE=1: the
    deepest tree, every message relayed) and flat (all children of mpiexec)."""
    TREE["degree"] = request.param
    yield request.param


def env(extra=None):
    e = {"WEFT_LAUNCHER_CMD": "ip netns exec %h", "WEFT_MT_DEGREE": TREE["degree"]}
    e.update(extra or {})
    return e


def run(launcher, args, marker, timeout=60, extra=None, **kw):
    return launcher.run(["-iface", BRIDGE] + args, env=env(extra), marker=marker,
                        timeout=timeout, **kw)


def hostlist(n=3, slots=2):
    return ",".join(f"{h}:{slots}" for h in HOSTS[:n])


def test_hello_3x2(launcher, hosts, clean):
    p = run(launcher, ["-hosts", hostlist(), "-l", "sh", "-c",
                       'echo "rank $PMI_RANK at $(ip -4 -o addr show eth0 | awk \'{print $4}\')"'],
            clean)
    assert p.returncode == 0, p.stderr
    for r in range(6):
        h = HOSTS[r // 2]
        assert f"[{r}] rank {r} at {ADDR[h]}/24" in p.stdout.splitlines(), p.stdout


def test_pmi_fences_across_hosts(launcher, hosts, clean):
    # Puts, fences and gets go through every host; node ids follow the hosts.
    p = run(launcher, ["-hosts", hostlist(), launcher.probe, "--rounds", "3",
                       "--allgather", "700"], clean)
    assert p.returncode == 0, p.stderr
    info = probe_lines(p.stdout)
    assert sorted(info) == list(range(6))
    assert [info[r]["node"] for r in range(6)] == ["0", "0", "1", "1", "2", "2"]
    assert all(info[r]["nodes"] == "3" for r in range(6))
    assert p.stdout.count(" ok") == 6, p.stdout


def test_fence_aggregated(launcher, hosts, clean, tree_degree):
    # mpiexec receives one fence message per direct connection: a chain
    # (degree 1) merges all three hosts' puts into one message, flat sends 3.
    p = run(launcher, ["-verbose", "-hosts", hostlist(), launcher.probe, "--rounds", "2"], clean)
    assert p.returncode == 0, p.stderr
    counts = re.findall(r"mpiexec: fence \d+: (\d+) message\(s\) for 3 host\(s\)", p.stderr)
    assert len(counts) >= 2, p.stderr  # one per round
    assert set(counts) == {"1" if tree_degree == "1" else "3"}, counts


@pytest.fixture(scope="module")
def mpi_prog(tmp_path_factory):
    mpicc = os.path.join(PREFIX, "bin", "mpicc")
    if not os.path.exists(mpicc):
        pytest.skip(f"no mpicc in {PREFIX} (run `make`)")
    exe = str(tmp_path_factory.mktemp("mpi") / "mpi_misbehave")
    p = subprocess.run([mpicc, "-o", exe, os.path.join(HERE, "mpi_misbehave.c")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return exe


def test_mpi_hello_3x2(launcher, hosts, clean, mpi_prog):
    p = run(launcher, ["-hosts", hostlist(), mpi_prog, "hello"], clean)
    assert p.returncode == 0, p.stderr
    got = sorted(l for l in p.stdout.splitlines() if l.startswith("hello "))
    assert got == sorted(f"hello {r} of 6" for r in range(6))


def test_mpi_ring_3x2(launcher, hosts, clean):
    if not os.path.isdir(os.path.join(os.path.dirname(os.path.dirname(HERE)), "src", "transport",
                                      "ofi")):
        pytest.skip("inter-node MPI traffic needs the netmod (src/transport/ofi), not on main yet")
    ring = os.path.join(BUILD, "tests", "mpi", "p2p_ring")
    if not os.path.exists(ring):
        pytest.skip(f"{ring} not built")
    p = run(launcher, ["-hosts", hostlist(), ring], clean, timeout=120)
    assert p.returncode == 0, p.stderr


def test_mpi_spawn_across_hosts(launcher, hosts, clean):
    """MPI_Comm_spawn at the MPI level with children on other hosts: a parent
    alone on the first host, the launcher's mapping puts the 3 children (and
    their nested grandchildren) on the next ones; data both ways, merge,
    allreduce, disconnect (tests/mpi/dynproc_spawn.c checks every value)."""
    prog = os.path.join(BUILD, "tests", "mpi", "dynproc_spawn")
    if not os.path.exists(prog):
        pytest.skip(f"{prog} not built")
    p = run(launcher, ["-hosts", f"{HOSTS[0]}:1,{HOSTS[1]}:2,{HOSTS[2]}:4", "-n", "1", prog, "3"],
            clean, timeout=180)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "No Errors" in p.stdout and "FAIL" not in p.stdout + p.stderr, p.stdout + p.stderr


@pytest.mark.parametrize("nhosts,victim", [(2, 1), (3, 2), (3, 1)])
def test_survivors_told_across_hosts(launcher, hosts, clean, nhosts, victim):
    """-disable-auto-cleanup: one rank (alone on its host; (3, 1): the middle
    host, whose proxy relays for the last one in the chain tree) dies while
    the others poll MPI_Test on a receive from it. The network keepalive
    timeout is set far beyond the program's 30 s limit, so only mpiexec's
    report (through each host's proxy and its shared-memory list of lost
    ranks) can fail those receives in time, and the survivors' finalize
    fence must not wait for the dead rank (tests/mpi/fault_lost_peer.c)."""
    prog = os.path.join(BUILD, "tests", "mpi", "fault_lost_peer")
    if not os.path.exists(prog):
        pytest.skip(f"{prog} not built")
    p = run(launcher, ["-disable-auto-cleanup", "-genv", "FAULT_VICTIM", str(victim),
                       "-hosts", hostlist(nhosts, 1), "-n", str(nhosts), prog, "poll"], clean,
            timeout=120, extra={"WEFT_NETMOD_PEER_TIMEOUT": "600"})
    out = p.stdout + p.stderr
    assert p.returncode == 128 + 9, out
    assert "FAIL" not in out, out
    for r in range(nhosts):
        if r != victim:
            assert f"survivor {r} ok" in p.stdout, out
    assert "reported by the launcher" in p.stderr, out


@pytest.mark.parametrize("form", ["hydra", "rsh", "ppn", "few", "hosts", "slurm"])
def test_hostfile_forms(launcher, hosts, clean, tmp_path, form):
    hf = tmp_path / "hosts"
    if form == "hydra":
        hf.write_text(f"# hydra form\n{HOSTS[0]}:1\n{HOSTS[1]}:3\n")
        args = ["-f", str(hf)]
        expect = [0, 1, 1, 1]
    elif form == "rsh":
        hf.write_text(f"{HOSTS[2]}\n{HOSTS[2]}\n{HOSTS[0]}\n{HOSTS[1]}\n{HOSTS[1]}\n")
        args = ["-hostfile", str(hf)]
        expect = [2, 2, 0, 1, 1]
    elif form == "ppn":
        hf.write_text(f"{HOSTS[0]}\n{HOSTS[1]}\n")
        args = ["-f", str(hf), "-ppn", "2", "-n", "6"]
        expect = [0, 0, 1, 1, 0, 0]
    elif form == "few":
        # Fewer ranks than slots: hosts left without a rank get no proxy.
        args = ["-hosts", hostlist(3, 4), "-n", "3"]
        expect = [0, 0, 0]
    elif form == "hosts":
        args = ["-hosts", f"{HOSTS[1]},{HOSTS[2]}:2", "-n", "3"]
        expect = [1, 2, 2]
    else:
        # Inside a Slurm allocation without -hosts/-f: its compressed node
        # list and tasks per node.
        extra = {"SLURM_JOB_NODELIST": f"wft{TAG}h[0-2]", "SLURM_TASKS_PER_NODE": "2(x2),1"}
        args = []
        expect = [0, 0, 1, 1, 2]
    p = run(launcher, args + ["sh", "-c", 'echo "at $PMI_RANK $(ip -4 -o addr show eth0 | '
                                         'awk \'{print $4}\')"'], clean,
            extra=extra if form == "slurm" else None)
    assert p.returncode == 0, p.stderr
    got = dict(re.findall(r"^at (\d+) (\S+)/24$", p.stdout, re.M))
    assert {int(k): v for k, v in got.items()} == {r: ADDR[HOSTS[h]]
                                                   for r, h in enumerate(expect)}, p.stdout


def test_exit_code_remote(launcher, hosts, clean):
    p = run(launcher, ["-hosts", hostlist(), launcher.helper, "exit", "5", "7"], clean,
            timeout=30)
    assert p.returncode == 7, p.stderr
    assert f"rank 5 (pid" in p.stderr and f"on host {HOSTS[2]} exited with code 7" in p.stderr
    assert p.elapsed < 10


def test_abort_remote(launcher, hosts, clean):
    p = run(launcher, ["-hosts", hostlist(), launcher.probe, "--abort", "3", "9"], clean,
            timeout=30)
    assert p.returncode == 9, p.stderr
    assert "mpiexec: rank 3 called MPI_Abort with code 9" in p.stderr
    assert p.elapsed < 8


def _wait_marked(marker, n, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = marked_pids(marker)
        if len(pids) >= n:
            return pids
        time.sleep(0.05)
    pytest.fail(f"only {len(marked_pids(marker))} of {n} marked processes started")


def _netns_of(pid):
    for h in HOSTS:
        r = subprocess.run(["ip", "netns", "identify", str(pid)], capture_output=True, text=True)
        return r.stdout.strip()
    return ""


def test_kill9_remote_rank(launcher, hosts, clean):
    p = launcher.popen(["-iface", BRIDGE, "-hosts", hostlist(), launcher.helper, "sleep", "60"],
                       env=env(), marker=clean)
    try:
        # Every rank has a child: 12 marked processes.
        pids = _wait_marked(clean, 12)
        victim = next(pid for pid in pids if _netns_of(pid) == HOSTS[1])
        t0 = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        out, err = p.communicate(timeout=30)
        assert time.monotonic() - t0 < 4, err
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 137, err
    assert f"on host {HOSTS[1]} killed by signal 9" in err


def _proxy_pid_in(host):
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"weft-proxy") and host.encode() in cmd:
            return int(d)
    return None


def test_kill9_remote_proxy(launcher, hosts, clean):
    p = launcher.popen(["-iface", BRIDGE, "-hosts", hostlist(), launcher.helper, "sleep", "60"],
                       env=env(), marker=clean)
    try:
        _wait_marked(clean, 12)
        proxy = _proxy_pid_in(HOSTS[2])
        assert proxy, "no weft-proxy for the third host"
        t0 = time.monotonic()
        os.kill(proxy, signal.SIGKILL)
        out, err = p.communicate(timeout=30)
        assert time.monotonic() - t0 < 4, err
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode != 0
    assert f"weft-proxy on host {HOSTS[2]}" in err, err


def test_sigusr1_forwarded(launcher, hosts, clean):
    script = ('trap "echo got usr1 $PMI_RANK; exit 0" USR1; echo ready $PMI_RANK; '
              'while :; do sleep 0.1; done')
    p = launcher.popen(["-iface", BRIDGE, "-hosts", hostlist(), "sh", "-c", script],
                       env=env(), marker=clean)
    try:
        ready = 0
        for line in p.stdout:
            ready += line.startswith("ready ")
            if ready == 6:
                break
        p.send_signal(signal.SIGUSR1)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err
    assert sorted(l for l in out.splitlines() if l.startswith("got")) == \
        sorted(f"got usr1 {r}" for r in range(6)), out


def test_link_down(launcher, hosts, clean):
    p = launcher.popen(["-iface", BRIDGE, "-hosts", hostlist(), launcher.helper, "sleep", "60"],
                       env=env({"WEFT_HEARTBEAT_TIMEOUT": "2"}), marker=clean)
    try:
        _wait_marked(clean, 12)
        t0 = time.monotonic()
        _ip("-n", HOSTS[1], "link", "set", "eth0", "down")
        out, err = p.communicate(timeout=30)
        assert time.monotonic() - t0 < 8, err
    finally:
        _ip("-n", HOSTS[1], "link", "set", "eth0", "up", check=False)
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode != 0
    assert f"host {HOSTS[1]}" in err, err


def test_forged_connection_refused(launcher, hosts, clean):
    # A peer that does not know the job secret is refused and logged while
    # the job goes on and finishes normally.
    p = launcher.popen(["-verbose", "-iface", BRIDGE, "-hosts", hostlist(), launcher.helper,
                        "sleep", "2"], env=env(), marker=clean)
    try:
        addr = None
        for line in p.stderr:
            m = re.search(r"remote proxies connect to ([\d.]+):(\d+)", line)
            if m:
                addr = (m.group(1), int(m.group(2)))
                break
        assert addr, "mpiexec -verbose did not print its address"
        assert not addr[0].startswith("127."), addr
        with socket.create_connection(addr, timeout=5) as s:
            hello = s.recv(40)
            assert hello[:6] == b"WEFTS1"
            # A well-formed reply with a MAC made without the secret.
            s.sendall(b"WEFTP1\0\0" + (1).to_bytes(4, "big") + os.urandom(64))
            s.settimeout(5)
            assert s.recv(32) == b"", "forged peer was not disconnected"
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err
    assert "refused a connection from" in err and "does not know the job secret" in err, err
    assert sorted(l for l in out.splitlines() if "sleeping" in l) == \
        sorted(f"rank {r} sleeping" for r in range(6))


def test_secret_not_visible(launcher, hosts, clean):
    # Neither the proxy's command line nor a rank's environment holds a
    # 64-hex-digit secret.
    p = run(launcher, ["-hosts", hostlist(2, 1), "sh", "-c",
                       'tr "\\0" " " < /proc/$PPID/cmdline; echo; env'], clean)
    assert p.returncode == 0, p.stderr
    assert "weft-proxy" in p.stdout and "--connect" in p.stdout
    assert not re.search(r"[0-9a-f]{64}", p.stdout), p.stdout


def test_host_without_weft(launcher, hosts, clean, tmp_path):
    # A host where the install directory is hidden (tmpfs over it in a
    # private mount namespace) gets a clear error naming host and path.
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) not installed")
    bindir = os.path.join(PREFIX, "bin")
    fake = tmp_path / "nohost.sh"
    fake.write_text('#!/bin/sh\nns=$1; shift\n'
                    'exec unshare -m sh -c \'d=$0; ns=$1; shift; mount -t tmpfs none "$d" && '
                    'exec ip netns exec "$ns" "$@"\' "' + bindir + '" "$ns" "$@"\n')
    fake.chmod(0o755)
    p = launcher.run(["-iface", BRIDGE, "-hosts", f"{HOSTS[0]},{HOSTS[1]}", "true"],
                     env={"WEFT_LAUNCHER_CMD": f"{fake} %h"}, marker=clean, timeout=30)
    assert p.returncode == 1, p.stderr
    assert re.search(rf"mpiexec: error: host ({HOSTS[0]}|{HOSTS[1]}) has no weft-proxy at "
                     rf"{re.escape(bindir)}/weft-proxy$", p.stderr, re.M), p.stderr


def test_unreachable_host_leaves_nothing(launcher, hosts, clean, tmp_path):
    # One host cannot reach mpiexec (a namespace without a network; its
    # launcher waits 1 s first, so the other host has the job by then and
    # holds the job's /dev/shm files): the job fails naming it, and the other
    # host's proxy ends and removes its files (the clean fixture checks
    # processes and /dev/shm).
    lone = f"wft{TAG}x"
    slow = tmp_path / "slow.sh"
    slow.write_text(f'#!/bin/sh\n[ "$1" = {lone} ] && sleep 1\nexec ip netns exec "$@"\n')
    slow.chmod(0o755)
    _ip("netns", "add", lone)
    try:
        p = launcher.run(["-iface", BRIDGE, "-verbose", "-hosts", f"{HOSTS[0]}:1,{lone}:1",
                          "sleep", "5"],
                         env={"WEFT_LAUNCHER_CMD": f"{slow} %h"}, marker=clean, timeout=60)
    finally:
        _ip("netns", "del", lone, check=False)
    assert p.returncode == 1, p.stderr
    assert re.search(rf"proxy pid \d+ on host {HOSTS[0]} runs 1 rank", p.stderr), p.stderr
    assert f"host {lone}" in p.stderr, p.stderr


def test_mpi_ring_second_interface(launcher, hosts, clean):
    """Each host also has an interface the other hosts cannot reach (a veth
    to nowhere with its own subnet, first in name order): the netmod must use the one
    the launcher reached the host on (WEFT_HOST_ADDR from mpiexec/weft-proxy),
    or the ring hangs or fails to connect."""
    ring = os.path.join(BUILD, "tests", "mpi", "p2p_ring")
    if not os.path.exists(ring):
        pytest.skip(f"{ring} not built")
    for i, h in enumerate(HOSTS):
        _ip("link", "add", f"wfa{TAG}{i}", "type", "veth", "peer", "name", "a0", "netns", h)
        _ip("link", "set", f"wfa{TAG}{i}", "up")
        _ip("-n", h, "addr", "add", f"10.67.{SUBNET}.{11 + i}/24", "dev", "a0")
        _ip("-n", h, "link", "set", "a0", "up")
    try:
        p = run(launcher, ["-hosts", hostlist(), ring], clean, timeout=120)
        assert p.returncode == 0, p.stderr
    finally:
        for i in range(len(HOSTS)):
            _ip("link", "del", f"wfa{TAG}{i}", check=False)
# --- dynamic processes across hosts (launcher side of spawn; test_dynproc.py has the rest)
def test_spawn_across_hosts(launcher, hosts, clean):
    # The parent runs on host 0; its children go where the info key 'host'
    # says (hosts 1 and 2), each child job with its own proxies and KVS, and
    # the children's output comes back through the spawned job's mpiexec.
    dyn = os.path.join(BUILD, "tests", "launcher", "pmi_dynproc_probe")
    kids = [f"{HOSTS[1]}:2", f"{HOSTS[2]}:2"]
    child = ["/usr/bin/env", f"WEFT_TEST_MARKER={clean}", "sh", "-c",
             'echo "child $PMI_RANK at $(ip -4 -o addr show eth0 | awk \'{print $4}\')"; '
             'exec "$0" --preput k', dyn]
    step = (["spawn", "4", child[0], str(len(child) - 1)] + child[1:] +
            ["1", "host", ",".join(kids), "1", "k", "across"])
    p = run(launcher, ["-hosts", f"{HOSTS[0]}:1", dyn] + step, clean)
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"dyn: op=spawn usec=\d+ rc=0 errcodes=0,0,0,0", p.stdout), p.stdout + p.stderr
    for r in range(4):
        h = HOSTS[1 + r // 2]
        assert f"child {r} at {ADDR[h]}/24" in p.stdout.splitlines(), p.stdout
    assert p.stdout.count("preput k=across") == 4
    assert p.stdout.count("spawned=1") == 4 and "nodes=2" in p.stdout


def test_spawn_missing_program_on_remote_hosts(launcher, hosts, clean):
    dyn = os.path.join(BUILD, "tests", "launcher", "pmi_dynproc_probe")
    step = ["spawn", "2", "/nonexistent/weft-prog", "0", "1", "host",
            f"{HOSTS[1]}:1,{HOSTS[2]}:1", "0", "pub", "still", "here", "look", "still"]
    p = run(launcher, ["-hosts", f"{HOSTS[0]}:1", dyn] + step, clean)
    assert p.returncode == 0, p.stdout + p.stderr
    assert re.search(r"dyn: op=spawn usec=\d+ rc=SPAWN errcodes=1,1", p.stdout), p.stdout
    assert "dyn: op=look service=still rc=0 port=here" in p.stdout
