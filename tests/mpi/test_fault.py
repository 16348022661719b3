# SPDX-License-Identifier: BSD-3-Clause
"""Lost processes (tests/mpi/fault_lost_peer.c): a rank killed with SIGKILL
while the others wait for it.

* mpirun -disable-auto-cleanup + MPI_ERRORS_RETURN: every survivor gets
  MPI_ERR_OTHER on its pending receive and rendezvous send, on a new send
  and on an ANY_SOURCE receive, then uses MPI_COMM_SELF and a communicator
  without the dead rank, and finalizes (exit 0: mpirun reports only the dead
  rank, whose signal is the job's exit code, 128 + 9).
* MPI_ERRORS_ARE_FATAL: the job aborts, naming the lost rank (library message
  under -disable-auto-cleanup; the launcher's own otherwise).
* Over the netmod on one host (WEFT_NETMOD_ONLY=1), once with the local pid
  watch off so only the netmod can notice.
* A spawned child that dies: the parent's receive on the intercommunicator
  fails, MPI_Comm_disconnect returns, the parent exits 0.
"""
import os
import re
import time
import signal
import subprocess

import pytest

from conftest import PREFIX, BUILD

PROG = BUILD / "tests" / "mpi" / "fault_lost_peer"
KILLED = 128 + 9


def run(np_, mode, flags=(), env=None, timeout=90):
    assert PROG.exists(), f"{PROG} not built"
    cmd = [str(PREFIX / "bin" / "mpirun"), *flags, "-n", str(np_), str(PROG), mode]
    run_env = dict(os.environ, WEFT_NETMOD_PEER_TIMEOUT="2", **(env or {}))
    try:
        p = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung (timeout {timeout} s): {' '.join(cmd)}\n{e.stdout}\n{e.stderr}")
    return p, f"cmd: {' '.join(cmd)}\nenv: {env}\nrc {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"


def check_survivors(np_, p, detail):
    victim = np_ - 1
    assert p.returncode == KILLED, detail
    assert "FAIL" not in p.stdout + p.stderr, detail
    assert "No Errors" in p.stdout, detail
    for r in range(np_ - 1):
        assert f"survivor {r} ok" in p.stdout, detail
    # Only the killed rank failed: the survivors finalized and exited 0.
    failed = re.findall(r"rank (\d+) \(pid \d+\) on host \S+ (?:killed|exited)", p.stderr)
    assert failed == [str(victim)], detail
    assert f"lost contact with rank {victim} on host" in p.stderr, detail


@pytest.mark.parametrize("np_", [2, 3, 4, 8])
def test_survivors_go_on(np_):
    p, detail = run(np_, "return", ["-disable-auto-cleanup"])
    check_survivors(np_, p, detail)


@pytest.mark.parametrize("np_", [2, 3, 4])
def test_survivors_go_on_netmod(np_):
    p, detail = run(np_, "return", ["-disable-auto-cleanup"], env={"WEFT_NETMOD_ONLY": "1"})
    check_survivors(np_, p, detail)


@pytest.mark.parametrize("np_,mode,env", [
    (2, "poll", None), (4, "poll", None), (2, "rma", None), (3, "rma", None),
    (3, "rma", {"WEFT_USE_SHM_ONE_SIDED": "0"}), (4, "rma", {"WEFT_NETMOD_ONLY": "1"}),
    (2, "rmaput", {"WEFT_USE_SHM_ONE_SIDED": "0"}),
    (3, "rmaput", {"WEFT_NETMOD_ONLY": "1", "WEFT_TEST_HOST_BLOCK": "1", "WEFT_RMA_FAKE_PPN": "1",
                   "WEFT_RMA_NET": "native"}),
    (2, "rmaput", {"WEFT_NETMOD_ONLY": "1", "WEFT_TEST_HOST_BLOCK": "1", "WEFT_RMA_FAKE_PPN": "1",
                   "WEFT_RMA_NET": "am"})])
def test_polling_survivors_notice(np_, mode, env):
    # poll: MPI_Test loops, no waits: the progress engine itself must notice
    # the loss. rma: window waits (lock, fence, start) give up on it, on the
    # shared-memory and the active-message paths.
    p, detail = run(np_, mode, ["-disable-auto-cleanup"], env=env)
    assert p.returncode == KILLED, detail
    assert "FAIL" not in p.stdout + p.stderr, detail
    for r in range(np_ - 1):
        assert f"survivor {r} ok" in p.stdout, detail
    assert f"lost contact with rank {np_ - 1} on host" in p.stderr, detail


def test_netmod_notices_alone():
    # No pid watch: the netmod's keepalive timeout must find the dead rank.
    p, detail = run(3, "return", ["-disable-auto-cleanup"],
                    env={"WEFT_NETMOD_ONLY": "1", "WEFT_PEER_CHECK_INTERVAL": "1000000000"})
    check_survivors(3, p, detail)
    assert "keepalive" in p.stderr, detail


@pytest.mark.parametrize("np_", [2, 3])
def test_fatal_handler_aborts_naming_rank(np_):
    victim = np_ - 1
    p, detail = run(np_, "fatal", ["-disable-auto-cleanup"])
    assert p.returncode == KILLED, detail  # the first failure's code
    assert "survivor" not in p.stdout, detail
    assert re.search(rf"fatal error: MPI_\w+: lost contact with rank {victim} on host", p.stderr), \
        detail


def test_default_launcher_ends_job_naming_rank():
    p, detail = run(3, "fatal")
    assert p.returncode == KILLED, detail
    assert re.search(r"rank 2 \(pid \d+\) on host \S+ killed by signal 9", p.stderr), detail
    assert "survivor" not in p.stdout, detail


@pytest.mark.parametrize("mode", ["spawn", "spawn-poll"])
def test_dead_child_fails_parent_receive(mode):
    p, detail = run(1, mode)
    assert p.returncode == 0, detail
    assert "parent ok" in p.stdout and "No Errors" in p.stdout, detail
    assert "FAIL" not in p.stdout + p.stderr, detail
    assert "lost contact with a process of another job" in p.stderr, detail


def test_killed_region_creator_leaves_no_shm():
    """Rank 0 makes a communicator's shared-memory collective region and waits
    for rank 1 (asleep) to map it; killing rank 0 then must leave nothing in
    /dev/shm: the region's name carries the job's prefix, which the launcher
    removes when the job ends."""
    prog = BUILD / "tests" / "mpi" / "coll_region_wait"
    assert prog.exists(), f"{prog} not built"
    before = set(os.listdir("/dev/shm"))
    p = subprocess.Popen([str(PREFIX / "bin" / "mpirun"), "-n", "2", str(prog), "20"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    region = None
    deadline = time.monotonic() + 15
    while region is None and time.monotonic() < deadline:
        new = [e for e in set(os.listdir("/dev/shm")) - before if "coll-" in e]
        region = new[0] if new else None
        time.sleep(0.05)
    try:
        assert region is not None, "no collective region appeared in /dev/shm"
        assert region.startswith("weft-") and not region.startswith("weft-coll-"), \
            f"{region}: not named under the job's prefix"
        creator = int(region.split("-coll-")[1].split("-")[0])
        os.kill(creator, signal.SIGKILL)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == KILLED, f"rc {p.returncode}\n{out}\n{err}"
    time.sleep(0.3)
    assert region not in os.listdir("/dev/shm"), f"{region} left in /dev/shm"


# ---- fragmented eager: the sender killed mid-message ------------------------
# tests/mpi/p2p_net_frag_kill.c: the last rank MPI_Isends rank 0 a fragmented
# eager message (net_frag.c) and makes no further MPI call; rank 0 kills it
# once the header has arrived. 1 KiB fragments of a 256 KiB message: 256 of
# them, more than the netmod's 64 send buffers, so the message can never
# arrive whole. Every run has a timeout: a receive that waits forever fails
# the test.

FRAG_KILL = BUILD / "tests" / "mpi" / "p2p_net_frag_kill"
FRAG_KILL_ENV = {"WEFT_NETMOD_ONLY": "1", "WEFT_EAGER_THRESHOLD": "1024",
                 "WEFT_NET_FRAG_MAX": "256k", "WEFT_NETMOD_PEER_TIMEOUT": "2"}


def run_frag_kill(np_, mode, env=None, timeout=60):
    assert FRAG_KILL.exists(), f"{FRAG_KILL} not built"
    cmd = [str(PREFIX / "bin" / "mpirun"), "-disable-auto-cleanup", "-n", str(np_),
           str(FRAG_KILL), mode]
    run_env = dict(os.environ, **FRAG_KILL_ENV, **(env or {}))
    # A session of its own, so a hung job is ended whole (launcher and ranks).
    p = subprocess.Popen(cmd, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"hung (timeout {timeout} s): {' '.join(cmd)}\n{out}\n{err}")
    return (subprocess.CompletedProcess(cmd, p.returncode, out, err),
            f"cmd: {' '.join(cmd)}\nenv: {env}\nrc {p.returncode}\nstdout:\n{out}\nstderr:\n{err}")


@pytest.mark.parametrize("np_", [3, 4])
@pytest.mark.parametrize("mode", ["posted", "posted_any", "unexpected", "unexpected_nb",
                                  "mprobe", "dropped"])
def test_frag_sender_killed_mid_message(mode, np_):
    # Rank 0's receive (matched when the header came, or matched later from
    # the unexpected queue, or taken by mprobe, or still queued) fails with
    # MPI_ERR_OTHER instead of waiting for fragments that never come; the
    # survivors then exchange eager and fragmented messages, byte-compared.
    p, detail = run_frag_kill(np_, mode)
    check_survivors(np_, p, detail)


@pytest.mark.parametrize("mode", ["posted", "unexpected_nb"])
def test_frag_sender_killed_netmod_notices_alone(mode):
    # No pid watch: the netmod's keepalive timeout must find the dead sender.
    p, detail = run_frag_kill(3, mode, env={"WEFT_PEER_CHECK_INTERVAL": "1000000000"})
    check_survivors(3, p, detail)
    assert "keepalive" in p.stderr, detail


@pytest.mark.parametrize("np_", [3, 4])
def test_frag_sender_killed_fatal_names_rank(np_):
    # MPI_ERRORS_ARE_FATAL on rank 0: its wait on the matched, unfinished
    # receive ends the job, and the message names the lost rank.
    victim = np_ - 1
    p, detail = run_frag_kill(np_, "fatal")
    # The job's code is the first failure's: the victim's signal, or rank 0's
    # abort should rank 0 learn of the death before the launcher records it.
    assert p.returncode != 0, detail
    assert re.search(rf"rank {victim} \(pid \d+\) on host \S+ killed by signal 9", p.stderr), detail
    assert "survivor 0 ok" not in p.stdout and "FAIL rank 0" not in p.stdout + p.stderr, detail
    assert re.search(rf"rank 0: fatal error: MPI_Wait: lost contact with rank {victim} on host "
                     rf"\d+ \(rank {victim} in this communicator\)", p.stderr), detail
