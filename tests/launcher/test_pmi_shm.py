# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Node-local PMI gets answered from the proxy's shared-memory snapshot
(src/pmi/pmi_shm.h): values are right, the snapshot is really used (or not,
with WEFT_PMI_SHM=0), nothing is left in /dev/shm."""
import os

import pytest

from conftest import probe_lines


def _pmikv():
    return set(e for e in os.listdir("/dev/shm") if "-pmikv" in e)


def _probe(launcher, marker, n, shm):
    before = _pmikv()
    p = launcher.run(["-n", str(n), launcher.probe, "--rounds", "3", "--allgather", "900",
                      "--time-gets", "50"], marker=marker, timeout=120,
                     env={"WEFT_PMI_SHM": shm})
    assert p.returncode == 0, p.stderr
    assert p.stdout.count(" ok") == n, p.stdout
    lines = [l for l in p.stdout.splitlines() if " usec_per_get=" in l]
    assert len(lines) == n, p.stdout
    assert all(l.endswith(f" shm={shm}") for l in lines), lines
    assert sorted(probe_lines(p.stdout)) == list(range(n))
    assert not (_pmikv() - before), _pmikv() - before
    return p


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
def test_pmi_gets_from_shm(launcher, marker, n):
    _probe(launcher, marker, n, "1")


def test_pmi_shm_off(launcher, marker):
    _probe(launcher, marker, 4, "0")


def test_pmi_shm_two_proxies(launcher, marker):
    # Two proxies on this machine (-launcher fork with two host names): each
    # writes its own snapshot, gets still right on both.
    before = _pmikv()
    p = launcher.run(["-launcher", "fork", "-hosts", "a:2,b:2", "-n", "4", launcher.probe,
                      "--rounds", "2", "--time-gets", "20"], marker=marker, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.splitlines() if " usec_per_get=" in l]
    assert len(lines) == 4 and all(l.endswith(" shm=1") for l in lines), p.stdout
    assert not (_pmikv() - before)


def test_pmi_shm_proxy_sharing_host_outlives_neighbour(launcher, marker):
    # Two proxies on one machine: the one whose ranks end first must not
    # sweep the job's /dev/shm entries while the other's ranks still use
    # them (its snapshot is looked up again by name after 1.5 s).
    before = _pmikv()
    p = launcher.run(["-launcher", "fork", "-hosts", "a:2,b:2", "-n", "4", launcher.probe,
                      "--rounds", "2", "--time-gets", "5", "--linger-node", "1", "1500"],
                     marker=marker, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.splitlines() if " usec_per_get=" in l]
    assert len(lines) == 4 and all(l.endswith(" shm=1") for l in lines), p.stdout
    assert not (_pmikv() - before)
