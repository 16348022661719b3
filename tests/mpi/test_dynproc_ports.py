# SPDX-License-Identifier: BSD-3-Clause
"""Dynamic processes across launches: two separately started mpiexecs
(tests/mpi/dynproc_connect.c): connect/accept with data both ways, merge,
disconnect; a connect to the closed port of a job that has ended fails with
MPI_ERR_PORT within WEFT_CONNECT_TIMEOUT; spawn from a singleton (no launcher);
MPI_Comm_join and publish/lookup between two mpiexecs (tests/mpi/dynproc_join.c)."""
import os
import subprocess
import time

import pytest

from conftest import PREFIX, BUILD

PROG = BUILD / "tests" / "mpi" / "dynproc_connect"


def mpiexec(n, *args, env=None):
    cmd = [str(PREFIX / "bin" / "mpiexec"), "-n", str(n), str(PROG), *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def finish(proc, what, timeout):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"{what} hung\nstdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}")
    detail = f"{what}: exit {proc.returncode}\nstdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}"
    return proc.returncode, out, detail


@pytest.mark.parametrize("na,nc", [(1, 1), (2, 3), (3, 1)], ids=["1+1", "2+3", "3+1"])
def test_connect_accept_two_jobs(tmp_path, na, nc):
    assert PROG.exists(), f"{PROG} not built"
    port_file = tmp_path / "port"
    acc = mpiexec(na, "accept", str(port_file))
    con = mpiexec(nc, "connect", str(port_file))
    rc_c, out_c, detail_c = finish(con, "connect job", 120)
    rc_a, out_a, detail_a = finish(acc, "accept job", 60)
    assert rc_a == 0 and "No Errors" in out_a, detail_a
    assert rc_c == 0 and "No Errors" in out_c, detail_c


@pytest.mark.parametrize("na,nc", [(1, 2), (2, 2)], ids=["1+2", "2+2"])
def test_connect_accept_one_host_without_libfabric(tmp_path, na, nc):
    # Two mpiexecs on one host: a port opened with WEFT_PORT_NETMOD=0 carries
    # no network address; both jobs talk through shared memory and neither
    # maps libfabric (the programs read /proc/self/maps).
    assert PROG.exists(), f"{PROG} not built"
    port_file = tmp_path / "port"
    env = dict(os.environ, WEFT_PORT_NETMOD="0", WEFT_TEST_NO_FABRIC="1")
    before = _bridges_and_doors()
    acc = mpiexec(na, "accept", str(port_file), env=env)
    con = mpiexec(nc, "connect", str(port_file), env=env)
    rc_c, out_c, detail_c = finish(con, "connect job", 120)
    rc_a, out_a, detail_a = finish(acc, "accept job", 60)
    assert rc_a == 0 and "No Errors" in out_a, detail_a
    assert rc_c == 0 and "No Errors" in out_c, detail_c
    # Bridges are unlinked once both sides mapped them, doors at finalize.
    left = _bridges_and_doors() - before
    assert not left, f"/dev/shm entries left: {left}"


def _bridges_and_doors():
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return set()
    return {n for n in names if n.startswith("weft-") and ("-br-" in n or "-door-" in n)}


def test_connect_to_closed_port_of_ended_job(tmp_path):
    assert PROG.exists(), f"{PROG} not built"
    port_file = tmp_path / "port"
    rc, out, detail = finish(mpiexec(1, "open-close", str(port_file)), "port job", 60)
    assert rc == 0 and "No Errors" in out, detail
    env = dict(os.environ, WEFT_CONNECT_TIMEOUT="2")
    t0 = time.monotonic()
    rc, out, detail = finish(mpiexec(2, "connect-closed", str(port_file), env=env),
                             "connect job", 60)
    elapsed = time.monotonic() - t0
    assert rc == 0 and "No Errors" in out, detail
    assert "connect to a closed port failed" in out, detail
    assert elapsed < 20, f"took {elapsed:.1f} s with WEFT_CONNECT_TIMEOUT=2\n{detail}"


def test_spawn_from_singleton():
    """No launcher: the library starts Weft's mpiexec (found in PATH) for the children."""
    prog = BUILD / "tests" / "mpi" / "dynproc_spawn"
    assert prog.exists(), f"{prog} not built"
    env = dict(os.environ, PATH=f"{PREFIX / 'bin'}:{os.environ.get('PATH', '')}")
    for k in [k for k in env if k.startswith("PMI_") or k == "WEFT_PMI_FD"]:
        del env[k]
    proc = subprocess.Popen([str(prog), "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    rc, out, detail = finish(proc, "singleton spawn", 180)
    assert rc == 0 and "No Errors" in out, detail
    assert "FAIL" not in out + detail, detail


JOIN = BUILD / "tests" / "mpi" / "dynproc_join"


def join_job(*args, env=None):
    cmd = [str(PREFIX / "bin" / "mpiexec"), "-n", "1", *args[:-1], str(JOIN), args[-1][0],
           args[-1][1]]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def test_join_two_jobs(tmp_path):
    """MPI_Comm_join over a TCP connection between processes of two mpiexecs."""
    assert JOIN.exists(), f"{JOIN} not built"
    f = str(tmp_path / "tcp")
    a = join_job(("join-listen", f))
    b = join_job(("join-connect", f))
    rc_b, out_b, detail_b = finish(b, "join-connect job", 120)
    rc_a, out_a, detail_a = finish(a, "join-listen job", 60)
    assert rc_a == 0 and "No Errors" in out_a, detail_a
    assert rc_b == 0 and "No Errors" in out_b, detail_b


def test_publish_lookup_two_jobs(tmp_path):
    """The first mpiexec serves names (-nameserver-file), the second uses it
    (-nameserver): publish, duplicate publish, lookup, connect, unpublish."""
    assert JOIN.exists(), f"{JOIN} not built"
    ns = str(tmp_path / "ns")
    ready = str(tmp_path / "ready")
    a = join_job("-nameserver-file", ns, ("publish", ready))
    for _ in range(600):
        if os.path.exists(ready):
            break
        time.sleep(0.05)
    b = join_job("-nameserver", ns, ("lookup", ready))
    rc_b, out_b, detail_b = finish(b, "lookup job", 120)
    rc_a, out_a, detail_a = finish(a, "publish job", 60)
    assert rc_a == 0 and "No Errors" in out_a, detail_a
    assert rc_b == 0 and "No Errors" in out_b, detail_b
