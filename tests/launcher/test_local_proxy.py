# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""The proxy of mpirun's own host: a forked child of mpirun running the proxy
code, without an exec of weft-proxy (WEFT_LOCAL_PROXY_EXEC=1 restores the
exec). It must look and behave like the exec'ed one: same descriptors, same
end of the job when it is killed, nothing left behind."""
import os
import re
import signal
import socket
import time

import pytest

from conftest import assert_no_leftovers, read_stdout_lines

# What a rank learns about its parent, the proxy: pid, name, executable, its
# parent, and its open descriptors (kind only: "pipe", "socket", a path).
PROBE = r'''p=$PPID
fds=$(for f in /proc/$p/fd/*; do l=$(readlink $f); echo ${l%%:*}; done | sort | tr '\n' ' ')
echo "rank=$PMI_RANK proxy=$p comm=$(cat /proc/$p/comm) exe=$(readlink /proc/$p/exe) \
ppid=$(cut -d' ' -f4 /proc/$p/stat) fds=$fds"
'''


def _proxy_info(launcher, np, env=None, marker=None):
    proc = launcher.popen(["-n", str(np), "sh", "-c", PROBE], env=env, marker=marker)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    infos = []
    for line in out.splitlines():
        m = re.match(r"rank=(\d+) proxy=(\d+) comm=(\S+) exe=(\S+) ppid=(\d+) fds=(.*)$", line)
        assert m, line
        infos.append(dict(rank=int(m[1]), proxy=int(m[2]), comm=m[3], exe=m[4], ppid=int(m[5]),
                          fds=[re.sub(r"weft-[0-9a-f]+-", "weft-JOB-", f) for f in m[6].split()],
                          mpirun=proc.pid))
    assert sorted(i["rank"] for i in infos) == list(range(np)), out
    return infos


@pytest.mark.parametrize("np", [1, 2, 4])
def test_local_proxy_is_forked_child(launcher, marker, np):
    infos = _proxy_info(launcher, np, marker=marker)
    mpiexec = os.path.realpath(launcher.mpiexec)
    assert len({i["proxy"] for i in infos}) == 1, infos  # one proxy for the host
    for i in infos:
        assert i["comm"] == "weft-proxy", i
        assert i["ppid"] == i["mpirun"], i           # mpirun's child
        assert i["exe"] == mpiexec, i                # and no exec of weft-proxy happened


def test_local_proxy_exec_knob(launcher, marker):
    infos = _proxy_info(launcher, 2, env={"WEFT_LOCAL_PROXY_EXEC": "1"}, marker=marker)
    for i in infos:
        assert i["exe"] == os.path.realpath(os.path.join(os.path.dirname(launcher.mpiexec),
                                                         "weft-proxy")), i
        assert i["ppid"] == i["mpirun"], i


def test_forked_proxy_holds_what_exec_proxy_holds(launcher, marker):
    """The fork closes what an exec would have (close-on-exec descriptors of
    mpirun: its signal pipe, other proxies' links): one rank's proxy holds the
    same kinds of descriptors either way."""
    forked = _proxy_info(launcher, 1, marker=marker)[0]["fds"]
    execed = _proxy_info(launcher, 1, env={"WEFT_LOCAL_PROXY_EXEC": "1"}, marker=marker)[0]["fds"]
    assert forked == execed, (forked, execed)


def test_forked_proxies_with_fork_launcher(launcher, marker):
    """-launcher fork: every host is this machine, one forked proxy each; none
    may hold another's control link (its EOF would then never come)."""
    p = launcher.run(["-launcher", "fork", "-hosts", "a:1,b:1,c:1", "-n", "3", "sh", "-c", PROBE],
                     marker=marker, timeout=60)
    assert p.returncode == 0, p.stderr
    proxies = set(re.findall(r"proxy=(\d+)", p.stdout))
    assert len(proxies) == 3, p.stdout
    socks = {len([f for f in l.split("fds=")[1].split() if f == "socket"])
             for l in p.stdout.splitlines()}
    assert len(socks) == 1, p.stdout  # each holds the same number of sockets


def _children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


@pytest.mark.parametrize("exec_knob", ["0", "1"])
def test_kill9_local_proxy_ends_job(launcher, marker, exec_knob):
    """kill -9 of the local proxy: the job ends at once with a message naming
    the host, the ranks' own children are killed too, and the job's /dev/shm
    entries are removed (the proxy cannot do either any more)."""
    proc = launcher.popen(["-n", "3", launcher.helper, "crash", "99"], marker=marker,
                          env={"WEFT_LOCAL_PROXY_EXEC": exec_knob})
    try:
        out = read_stdout_lines(proc, 1)
        m = re.search(r"jobid=(\w+)", out)
        assert m, out
        jobid = m[1]
        deadline = time.monotonic() + 10
        while len([f for f in os.listdir("/dev/shm") if f.startswith(f"weft-{jobid}-r")]) < 3:
            assert time.monotonic() < deadline, "ranks did not start"
            time.sleep(0.05)
        proxies = _children(proc.pid)
        assert len(proxies) == 1, proxies
        t0 = time.monotonic()
        os.kill(proxies[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=20)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert proc.returncode != 0, err
    host = socket.gethostname()
    assert f"weft-proxy on host {host} died unexpectedly (signal 9)" in err, err
    assert elapsed < 2.5, elapsed
    assert_no_leftovers(marker, wait=1.0)
    left = [f for f in os.listdir("/dev/shm") if f.startswith(f"weft-{jobid}-")]
    assert not left, left


def test_no_libcrypto_for_one_host_job(launcher, marker):
    """libcrypto (the job secret's HMAC) is loaded only when a remote proxy or
    a name-service client needs it: not in mpirun, nor its forked proxy, for a
    job on this host alone (test_remote.py covers the remote case)."""
    script = 'p=$PPID; m=$(cut -d" " -f4 /proc/$p/stat); ' \
             'echo "mpirun=$m $(grep -c libcrypto /proc/$m/maps) proxy=$(grep -c libcrypto /proc/$p/maps)"'
    proc = launcher.popen(["-n", "1", "sh", "-c", script], marker=marker)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == f"mpirun={proc.pid} 0 proxy=0", out
