# SPDX-License-Identifier: BSD-3-Clause
"""OpenSHMEM across network-namespace "hosts" (hosts fixture of test_netns.py):
the shmem test programs with PEs on 2 hosts x 1 and x 2 PEs and 3 hosts x 2.
PEs of one host share memory (loads, stores, CPU atomics); PEs of other hosts
are reached by requests over the libfabric netmod (src/shmem/shmem_net.c).
Every rank is started by one mpirun, so the node layout is given to the peer
table (WEFT_TEST_HOST_BLOCK, set by launch) and to OpenSHMEM
(WEFT_SHMEM_FAKE_PPN). shmem_basic and shmem_nodes hold the atomic contention
checks (10^4 fetch_inc / fetch_add per PE on one word, exact) and wait_until
woken by a put from another host; shmem_errors checks that bad input aimed at
a PE on another host still aborts naming the call.
"""
import pytest

from test_netns import check_passed, hosts, run_program  # noqa: F401 (hosts is a fixture)

RUNS = [  # (program, nhosts, per_host, args)
    ("shmem_basic", 2, 1, ()), ("shmem_nodes", 2, 1, ()), ("shmem_team", 2, 1, ()),
    ("shmem_ctx", 2, 1, ()), ("shmem_globals", 2, 1, ()), ("shmem_active", 2, 1, ()),
    ("shmem_hybrid", 2, 1, ("shmem-first",)),
    ("shmem_basic", 2, 2, ()), ("shmem_nodes", 2, 2, ()), ("shmem_team", 2, 2, ()),
    ("shmem_basic", 3, 2, ()), ("shmem_nodes", 3, 2, ()), ("shmem_ctx", 3, 2, ()),
]


def run(hosts, name, nhosts, per_host, args=()):  # noqa: F811
    return run_program(hosts, nhosts, per_host, name, args, {"WEFT_SHMEM_FAKE_PPN": str(per_host)})


@pytest.mark.parametrize("name,nhosts,per_host,args", RUNS,
                         ids=[f"{n}-{h}x{p}" + (f"-{a[0]}" if a else "") for n, h, p, a in RUNS])
def test_shmem_across_hosts(hosts, name, nhosts, per_host, args):  # noqa: F811
    check_passed(*run(hosts, name, nhosts, per_host, args))


ERRORS = [  # case, words the message must contain (PE 0 aims at PE 1, on the other host)
    ("bad-pe", ["shmem_int_put", "PE 2 out of range"]),
    ("remote-past-heap-end", ["shmem_int_get", "not in the symmetric heap"]),
    ("remote-not-symmetric", ["shmem_int_put", "not in the symmetric heap"]),
]


@pytest.mark.parametrize("case,words", ERRORS, ids=[c[0] for c in ERRORS])
def test_shmem_bad_input_across_hosts(hosts, case, words):  # noqa: F811
    proc, detail = run(hosts, "shmem_errors", 2, 1, (case,))
    assert proc.returncode != 0, detail
    assert "NOT ABORTED" not in proc.stdout, detail
    for w in words:
        assert w in proc.stderr, f"missing {w!r}\n{detail}"


@pytest.mark.parametrize("nhosts,per_host", [(2, 1), (3, 1), (2, 2)])
def test_shmem_async_progress(hosts, nhosts, per_host):  # noqa: F811
    """WEFT_ASYNC_PROGRESS=1: fetch_inc, adds, puts (libfabric RMA and messages) and
    gets on a PE computing without calls complete before its loop ends (30 s cap)."""
    proc, detail = run_program(hosts, nhosts, per_host, "shmem_async_progress", ["expect", "30"],
                               {"WEFT_SHMEM_FAKE_PPN": str(per_host), "WEFT_ASYNC_PROGRESS": "1"})
    check_passed(proc, detail)
    assert "operations completed while the target computed" in proc.stdout, proc.stdout
