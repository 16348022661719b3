# SPDX-License-Identifier: BSD-3-Clause
"""One-sided communication across network-namespace "hosts" (hosts fixture of
test_netns.py): rma_ops, rma_sync and rma_accops with put/get by libfabric RMA
(WEFT_RMA_NET=native: window creation fails if a window of the
create/allocate flavours cannot use it) and by active messages (am), one rank
per host and two per host (windows then span shared memory and the network:
put/get to the other host by libfabric RMA, to the same host by messages), and
rma_net_onesided, which
reports whether put/get complete while the target computes (tcp;ofi_rxm
progresses data only inside the target's MPI calls, docs/design.md).
Windows take their node layout from PMI, and every rank here is started by one
mpirun: WEFT_RMA_FAKE_PPN gives them the hosts WEFT_TEST_HOST_BLOCK gives the
peer table.
"""
import pytest

from test_netns import check_passed, hosts, run_program  # noqa: F401 (hosts is a fixture)

RUNS = [  # (program, nhosts, per_host, WEFT_RMA_NET)
    ("rma_ops", 2, 1, "native"), ("rma_sync", 2, 1, "native"), ("rma_accops", 2, 1, "native"),
    ("rma_ops", 3, 1, "native"), ("rma_sync", 3, 1, "native"), ("rma_accops", 3, 1, "native"),
    ("rma_ops", 2, 1, "am"), ("rma_sync", 2, 1, "am"),
    ("rma_ops", 2, 2, "auto"), ("rma_sync", 2, 2, "auto"), ("rma_accops", 2, 2, "auto"),
    ("rma_ops", 2, 2, "native"),
]


def run(hosts, name, nhosts, per_host, net, args=()):  # noqa: F811
    proc, detail = run_program(hosts, nhosts, per_host, name, args,
                               {"WEFT_RMA_NET": net, "WEFT_RMA_FAKE_PPN": str(per_host)})
    check_passed(proc, detail)
    return proc.stdout


@pytest.mark.parametrize("name,nhosts,per_host,net", RUNS,
                         ids=[f"{n}-{h}x{p}-{m}" for n, h, p, m in RUNS])
def test_rma_across_hosts(hosts, name, nhosts, per_host, net):  # noqa: F811
    run(hosts, name, nhosts, per_host, net)


def test_rma_counters_native(hosts):  # noqa: F811
    """Put/get to the other host are counted as libfabric RMA, the rest as messages."""
    run(hosts, "mpit_rma", 2, 1, "native", ["net"])


def test_rma_counters_mixed(hosts):  # noqa: F811
    """Two ranks per host: put/get to the neighbour on the other host are counted as
    libfabric RMA, those to the neighbour on the same host as messages."""
    run(hosts, "mpit_rma", 2, 2, "native", ["net", "2"])


def test_rma_target_computing(hosts):  # noqa: F811
    """Data is right whatever the provider's progress; the report says whether the
    target's compute loop (2 s) delayed the origin."""
    out = run(hosts, "rma_net_onesided", 2, 1, "native", ["report", "2"])
    print(out)


@pytest.mark.parametrize("nhosts,per_host,flavor", [(2, 1, "allocate"), (3, 1, "dynamic"),
                                                     (2, 2, "create")])
def test_rma_async_progress(hosts, nhosts, per_host, flavor):  # noqa: F811
    """WEFT_ASYNC_PROGRESS=1: locks, accumulates, atomics and a rendezvous on a target
    computing without MPI calls complete before its compute loop ends (30 s cap)."""
    proc, detail = run_program(hosts, nhosts, per_host, "rma_async_progress",
                               ["expect", "30", flavor],
                               {"WEFT_RMA_FAKE_PPN": str(per_host), "WEFT_ASYNC_PROGRESS": "1"})
    check_passed(proc, detail)
    assert "operations completed while the target computed" in proc.stdout, proc.stdout
