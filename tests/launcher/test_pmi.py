# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""PMI-1 and PMI-2 through mpiexec's proxies, MPICH hydra and singleton mode."""
import os
import re
import shutil
import struct
import subprocess

import pytest

from conftest import PREFIX, probe_lines

NP = [1, 2, 3, 4, 8]


def check_probe(p, np, version, nodes=1):
    assert p.returncode == 0, p.stdout + p.stderr
    info = probe_lines(p.stdout)
    assert sorted(info) == list(range(np)), p.stdout
    for r, f in info.items():
        assert int(f["size"]) == np
        assert int(f["version"]) == version
        assert int(f["nodes"]) == nodes
        assert int(f["universe"]) >= np
    assert p.stdout.count(" ok\n") == np
    return info


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("np", NP)
def test_kvs_roundtrip(launcher, marker, np, version):
    p = launcher.run(["-n", str(np), launcher.probe, "--rounds", "3", "--allgather", "1000"],
                     env={"WEFT_PMI_VERSION": str(version)}, marker=marker, timeout=60)
    info = check_probe(p, np, version)
    for r, f in info.items():
        assert f["local_rank"] == str(r) and f["local_size"] == str(np)
        assert f["local_ranks"] == ",".join(str(i) for i in range(np))


def test_pmi_version_env_selects_v2(launcher, marker):
    p = launcher.run(["-n", "2", launcher.probe], env={"PMI_VERSION": "2"}, marker=marker)
    check_probe(p, 2, 2)


def test_mixed_versions_in_one_job(launcher, marker):
    # Rank 0 speaks PMI-1, the others PMI-2: the proxy detects per connection.
    script = ('if [ "$PMI_RANK" = 0 ]; then export WEFT_PMI_VERSION=1; '
              'else export WEFT_PMI_VERSION=2; fi; exec "$0" --rounds 2')
    p = launcher.run(["-n", "3", "sh", "-c", script, launcher.probe], marker=marker)
    assert p.returncode == 0, p.stderr
    info = probe_lines(p.stdout)
    assert [info[r]["version"] for r in range(3)] == ["1", "2", "2"]


def test_singleton(launcher):
    p = subprocess.run([launcher.probe, "--rounds", "2", "--allgather", "600"], capture_output=True,
                       text=True, timeout=30, env=launcher.env())
    assert p.returncode == 0, p.stderr
    f = probe_lines(p.stdout)[0]
    assert f["singleton"] == "1" and f["size"] == "1" and f["version"] == "0"


@pytest.mark.parametrize("version", [1, 2])
def test_two_proxies_fence(launcher, marker, tmp_path, version):
    # Two host names for this machine -> two weft-proxies -> fences go
    # through mpiexec and nodes come from PMI_process_mapping.
    hf = tmp_path / "hosts"
    hf.write_text("localhost:2\n127.0.0.1:3\n")
    p = launcher.run(["-f", str(hf), "-n", "5", launcher.probe, "--rounds", "3",
                      "--allgather", "700"], env={"WEFT_PMI_VERSION": str(version)},
                     marker=marker)
    info = check_probe(p, 5, version, nodes=2)
    assert [info[r]["node"] for r in range(5)] == ["0", "0", "1", "1", "1"]
    assert info[3]["local_ranks"] == "2,3,4" and info[3]["local_rank"] == "1"


def test_ppn_wraps_around_hosts(launcher, marker):
    p = launcher.run(["-hosts", "localhost,127.0.0.1", "-ppn", "1", "-n", "4", launcher.probe],
                     marker=marker)
    info = check_probe(p, 4, 1, nodes=2)
    assert [info[r]["node"] for r in range(4)] == ["0", "1", "0", "1"]
    assert info[0]["local_ranks"] == "0,2" and info[3]["local_ranks"] == "1,3"


@pytest.mark.parametrize("version", [1, 2])
def test_abort(launcher, marker, version):
    p = launcher.run(["-n", "3", launcher.probe, "--abort", "1", "7"],
                     env={"WEFT_PMI_VERSION": str(version)}, marker=marker, timeout=30)
    assert p.returncode == 7, p.stderr
    assert "mpiexec: rank 1 called MPI_Abort with code 7: probe abort requested" in p.stderr
    assert p.elapsed < 5


def test_exit_without_finalize_is_failure(launcher, marker):
    p = launcher.run(["-n", "3", launcher.probe, "--no-finalize", "1"], marker=marker, timeout=30)
    assert p.returncode != 0
    assert re.search(r"rank 1 \(pid \d+\) on host \S+ exited with code 0 without finalizing",
                     p.stderr)


def test_exit_code_after_init(launcher, marker):
    p = launcher.run(["-n", "2", launcher.probe, "--exit", "0", "9"], marker=marker, timeout=30)
    assert p.returncode == 9
    assert "rank 0" in p.stderr and "exited with code 9" in p.stderr


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("np", [1, 2, 3])
def test_hydra_interop(launcher, np, version):
    if not os.path.exists(launcher.hydra):
        pytest.skip(f"MPICH hydra not found at {launcher.hydra} "
                    "(set WEFT_PEER_MPICH_PREFIX to a venv with the mpich wheel)")
    p = subprocess.run([launcher.hydra, "-n", str(np), launcher.probe, "--rounds", "2",
                        "--allgather", "900"], capture_output=True, text=True, timeout=60,
                       env=launcher.env({"WEFT_PMI_VERSION": str(version)}))
    check_probe(p, np, version)


def _pmi_requests(launcher, tmp_path, args):
    """Run mpiexec under strace; the PMI-1 commands the ranks wrote."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed")
    log = tmp_path / "strace.txt"
    cmd = ["strace", "-f", "-qq", "-e", "trace=write", "-s", "200", "-o", str(log),
           launcher.mpiexec] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=launcher.env(),
                       stdin=subprocess.DEVNULL)
    return p, re.findall(r'"cmd=(\w+)[^"]*', log.read_text())


@pytest.mark.parametrize("np", [1, 3])
def test_init_asks_nothing_weft_proxy_told(launcher, marker, tmp_path, np):
    """weft-proxy puts kvsname, appnum and the process mapping in WEFT_PMI_JOB:
    a rank's PMI init is one round trip, not four; the layout is still right."""
    p, cmds = _pmi_requests(launcher, tmp_path, ["-genv", "WEFT_TEST_MARKER", marker, "-n",
                                                 str(np), launcher.probe])
    check_probe(p, np, 1)
    assert cmds.count("init") == np, cmds
    assert "get_my_kvsname" not in cmds and "get_appnum" not in cmds, cmds
    # The probe's own gets come from the shared-memory snapshot; no mapping get.
    assert not [c for c in cmds if c == "get"], cmds


def test_stale_pmi_job_env_ignored(launcher, marker, tmp_path):
    """A WEFT_PMI_JOB the rank inherited from elsewhere (here set between the
    proxy and the rank, with a wrong layout) names another socket: ignored,
    the rank asks the server and gets the right layout."""
    p, cmds = _pmi_requests(launcher, tmp_path, [
        "-genv", "WEFT_TEST_MARKER", marker, "-n", "3", "env",
        "WEFT_PMI_JOB=1:7:weft_kvs_stale:(vector,(0,3,1))", launcher.probe])
    info = check_probe(p, 3, 1)
    assert {f["local_size"] for f in info.values()} == {"3"}, p.stdout
    assert cmds.count("get_my_kvsname") == 3 and cmds.count("get_appnum") == 3, cmds


def _dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.mark.parametrize("run", range(3))
def test_stale_segment_of_a_killed_job(launcher, marker, run):
    """A node segment left by a killed job whose id comes again (launchers make
    ids unique, so hydra with a fixed WEFT_JOBID stands in): ranks do not wait
    for the whole node at init, so a rank other than local rank 0 may open the
    old file before rank 0 replaces it; its creator is gone, so that rank must
    wait for the new one. The job runs, and no segment is left."""
    if not os.path.exists(launcher.hydra):
        pytest.skip(f"MPICH hydra not found at {launcher.hydra} "
                    "(set WEFT_PEER_MPICH_PREFIX to a venv with the mpich wheel)")
    jobid = f"stale{os.getpid()}x{run}"
    path = f"/dev/shm/weft-{jobid}-0-shm"
    # Local rank 0's control block as a killed job leaves it: published
    # (attached = 1 at offset 112) by a process that no longer exists (pid at 8).
    with open(path, "wb") as f:
        f.truncate(256 << 20)  # sparse: more than any np 3 segment needs
        f.seek(8)
        f.write(struct.pack("<i", _dead_pid()))
        f.seek(112)
        f.write(struct.pack("<I", 1))
    try:
        p = subprocess.run([launcher.hydra, "-n", "3", "-genv", "WEFT_JOBID", jobid,
                            "-genv", "WEFT_TEST_MARKER", marker,
                            os.path.join(PREFIX, "libexec", "weft", "examples", "hello")],
                           capture_output=True, text=True, timeout=60, env=launcher.env())
        assert p.returncode == 0, p.stdout + p.stderr
        for r in range(3):
            assert f"hello from rank {r} of 3" in p.stdout, p.stdout + p.stderr
        left = [e for e in os.listdir("/dev/shm") if e.startswith(f"weft-{jobid}-")]
        assert not left, f"left in /dev/shm: {left}"
    finally:
        for e in os.listdir("/dev/shm"):
            if e.startswith(f"weft-{jobid}-"):
                os.unlink(os.path.join("/dev/shm", e))
