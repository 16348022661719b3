# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Node-local PMI gets answered from the proxy's shared-memory snapshot
(src/pmi/pmi_shm.h): values are right, the snapshot is really used (or not,
with WEFT_PMI_SHM=0), nothing is left in /dev/shm."""
import time

import pytest

from conftest import assert_no_job_shm, job_shm_entries, probe_lines


def _probe(launcher, marker, n, shm):
    p = launcher.run(["-n", str(n), launcher.probe, "--rounds", "3", "--allgather", "900",
                      "--time-gets", "50"], marker=marker, timeout=120,
                     env={"WEFT_PMI_SHM": shm})
    assert p.returncode == 0, p.stderr
    assert p.stdout.count(" ok") == n, p.stdout
    lines = [l for l in p.stdout.splitlines() if " usec_per_get=" in l]
    assert len(lines) == n, p.stdout
    assert all(l.endswith(f" shm={shm}") for l in lines), lines
    assert sorted(probe_lines(p.stdout)) == list(range(n))
    assert_no_job_shm(marker)
    return p


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
def test_pmi_gets_from_shm(launcher, marker, n):
    _probe(launcher, marker, n, "1")


def test_pmi_shm_off(launcher, marker):
    _probe(launcher, marker, 4, "0")


def test_pmi_shm_two_proxies(launcher, marker):
    # Two proxies on this machine (-launcher fork with two host names): each
    # writes its own snapshot, gets still right on both.
    p = launcher.run(["-launcher", "fork", "-hosts", "a:2,b:2", "-n", "4", launcher.probe,
                      "--rounds", "2", "--time-gets", "20"], marker=marker, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.splitlines() if " usec_per_get=" in l]
    assert len(lines) == 4 and all(l.endswith(" shm=1") for l in lines), p.stdout
    assert_no_job_shm(marker)


def test_pmi_shm_proxy_sharing_host_outlives_neighbour(launcher, marker):
    # Two proxies on one machine: the one whose ranks end first must not
    # sweep the job's /dev/shm entries while the other's ranks still use
    # them (its snapshot is looked up again by name after 1.5 s).
    proc = launcher.popen(["-launcher", "fork", "-hosts", "a:2,b:2", "-n", "4", launcher.probe,
                           "--rounds", "2", "--time-gets", "5", "--linger-node", "1", "1500"],
                          marker=marker)
    try:
        # The job's entries are found by its id (this also proves that the
        # leftover checks of these tests look at the right names).
        deadline = time.monotonic() + 30
        while not job_shm_entries(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert job_shm_entries(marker), "no /dev/shm entry of the running job found"
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = [l for l in out.splitlines() if " usec_per_get=" in l]
    assert len(lines) == 4 and all(l.endswith(" shm=1") for l in lines), out
    assert_no_job_shm(marker)
