# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Spawn and the name service at the PMI level (pmi.h "Dynamic processes"),
driven by tests/launcher/pmi_dynproc_probe under Weft's mpiexec, without a
launcher (singleton), and across two mpiexecs. The MPI calls on top are
tested in tests/mpi once the core side exists.

Spawned children run as `env WEFT_TEST_MARKER=<marker> probe ...` so the
leftover check covers them as well as the parents.
"""
import os
import re
import stat
import subprocess
import time

import pytest

from conftest import PREFIX, assert_no_leftovers

NP = [1, 2, 3, 4, 8]


def dyn(stdout):
    """'dyn: rank=R ...' lines, split into (parents, children) by spawned=."""
    parents, children = {}, {}
    for line in stdout.splitlines():
        m = re.match(r"dyn: rank=(\d+) size=(\d+) spawned=(\d) universe=(\d+) appnum=(\d+) "
                     r"nodes=(\d+) kvs=(\S+)", line)
        if m:
            d = dict(zip(["rank", "size", "spawned", "universe", "appnum", "nodes", "kvs"],
                         m.groups()))
            (children if d["spawned"] == "1" else parents).setdefault(int(d["rank"]), []).append(d)
    return parents, children


def ops(stdout, op):
    return [dict(kv.split("=", 1) for kv in line[5:].split(" msg=")[0].split())
            for line in stdout.splitlines() if line.startswith(f"dyn: op={op} ")]


def spawn_step(n, prog_args, preput=(), info=()):
    step = ["spawn", str(n)] + [prog_args[0], str(len(prog_args) - 1)] + list(prog_args[1:])
    step += [str(len(info))] + [x for kv in info for x in kv]
    step += [str(len(preput))] + [x for kv in preput for x in kv]
    return step


def spawnm_step(cmds, preput=()):
    """cmds: list of (n, prog_args, info)."""
    step = ["spawnm", str(len(cmds))]
    for n, prog_args, info in cmds:
        step += [str(n), prog_args[0], str(len(prog_args) - 1)] + list(prog_args[1:])
        step += [str(len(info))] + [x for kv in info for x in kv]
    return step + [str(len(preput))] + [x for kv in preput for x in kv]


def child_cmd(launcher, marker, *args):
    return ["/usr/bin/env", f"WEFT_TEST_MARKER={marker}", launcher.dynprobe, *args]


@pytest.fixture
def dynprobe(launcher):
    from conftest import BUILD, need
    launcher.dynprobe = need(os.path.join(BUILD, "tests", "launcher", "pmi_dynproc_probe"),
                             "build tests/launcher (ninja -C build pmi_dynproc_probe)")
    return launcher


@pytest.mark.parametrize("version", [1, 2])
def test_name_service_in_one_job(dynprobe, marker, version):
    L = dynprobe
    p = L.run(["-n", "2", L.dynprobe, "pub", "svc", "tcp:10.0.0.1:77", "pub", "svc", "other",
               "look", "svc", "unpub", "svc", "look", "svc", "unpub", "svc"],
              env={"WEFT_PMI_VERSION": str(version)}, marker=marker, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    assert [o["rc"] for o in ops(p.stdout, "pub")] == ["0", "DUPLICATE"]
    looks = ops(p.stdout, "look")
    assert [(o["rc"], o.get("port")) for o in looks] == [("0", "tcp:10.0.0.1:77"),
                                                          ("NOT_FOUND", "")]
    assert [o["rc"] for o in ops(p.stdout, "unpub")] == ["0", "NOT_FOUND"]


@pytest.mark.parametrize("np", NP)
def test_spawn_from_n_parents(dynprobe, marker, np):
    L = dynprobe
    kids = 3
    step = spawn_step(kids, child_cmd(L, marker, "--preput", "pkey", "--preput", "absent"),
                      preput=[("pkey", "hello-children"), ("second", "x")])
    p = L.run(["-n", str(np), L.dynprobe] + step, marker=marker, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    sp = ops(p.stdout, "spawn")
    assert len(sp) == 1 and sp[0]["rc"] == "0" and sp[0]["errcodes"] == "0,0,0", p.stdout
    parents, children = dyn(p.stdout)
    assert sorted(parents) == list(range(np))
    assert sorted(children) == list(range(kids)), p.stdout
    kvs = {c[0]["kvs"] for c in children.values()}
    assert len(kvs) == 1 and kvs.isdisjoint({v[0]["kvs"] for v in parents.values()})
    for r, c in children.items():
        assert c[0]["size"] == str(kids) and c[0]["spawned"] == "1"
    # Every child reads the pairs the parent passed, and only those.
    assert p.stdout.count("preput pkey=hello-children") == kids
    assert p.stdout.count("preput absent=(none)") == kids


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("kids", [1, 4])
def test_spawn_wire_versions(dynprobe, marker, version, kids):
    L = dynprobe
    step = spawn_step(kids, child_cmd(L, marker), preput=[("k", "v")])
    p = L.run(["-n", "2", L.dynprobe] + step, env={"WEFT_PMI_VERSION": str(version)},
              marker=marker, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ops(p.stdout, "spawn")[0]["errcodes"] == ",".join(["0"] * kids)
    assert sorted(dyn(p.stdout)[1]) == list(range(kids))


def test_spawn_missing_program_leaves_parent_running(dynprobe, marker):
    L = dynprobe
    step = spawn_step(2, ["/nonexistent/weft-prog"])
    p = L.run(["-n", "2", L.dynprobe] + step + ["pub", "after", "p1", "look", "after"],
              marker=marker, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    sp = ops(p.stdout, "spawn")[0]
    assert sp["rc"] == "SPAWN" and sp["errcodes"] == "1,1"
    assert "not found" in p.stdout
    # The parent job goes on: its name service still answers.
    assert ops(p.stdout, "look")[0]["port"] == "p1"


def test_spawn_exec_failure_is_detected(dynprobe, marker, tmp_path):
    # Passes mpiexec's checks (a file, executable) but execve fails.
    bad = tmp_path / "badinterp"
    bad.write_text("#!/nonexistent/interpreter\n")
    bad.chmod(0o755)
    L = dynprobe
    p = L.run(["-n", "1", L.dynprobe] + spawn_step(3, [str(bad)]) + ["look", "x"],
              marker=marker, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    sp = ops(p.stdout, "spawn")[0]
    assert sp["rc"] == "SPAWN", p.stdout
    assert "1" in sp["errcodes"].split(","), sp
    assert "cannot execute" in p.stdout
    assert ops(p.stdout, "look")[0]["rc"] == "NOT_FOUND"


def test_child_failure_does_not_end_parent(dynprobe, marker, tmp_path):
    L = dynprobe
    go = tmp_path / "go"
    # Children fail at once; the parent keeps going and exits 0 afterwards.
    step = spawn_step(2, ["/bin/sh", "-c", "exit 3"])
    p = L.run(["-n", "2", L.dynprobe] + step + ["touch", str(go), "pub", "alive", "yes"],
              marker=marker, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ops(p.stdout, "spawn")[0]["rc"] == "0"
    assert ops(p.stdout, "pub")[0]["rc"] == "0"
    assert "exited with code 3" in p.stderr


def test_kill_on_child_failure(dynprobe, marker, tmp_path):
    L = dynprobe
    never = tmp_path / "never"
    step = spawn_step(2, ["/bin/sh", "-c", "exit 3"])
    p = L.run(["-kill-on-child-failure", "-n", "2", L.dynprobe] + step +
              ["waitfile", str(never)], marker=marker, timeout=30)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "-kill-on-child-failure" in p.stderr
    assert p.elapsed < 20


def test_parent_waits_for_children(dynprobe, marker):
    L = dynprobe
    step = spawn_step(2, ["/usr/bin/env", f"WEFT_TEST_MARKER={marker}", "sleep", "1.5"])
    p = L.run(["-n", "1", L.dynprobe] + step, marker=marker, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.elapsed >= 1.4  # mpiexec returned only after the spawned job


def test_spawn_info_wdir_and_path(dynprobe, marker, tmp_path):
    L = dynprobe
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "whereami"
    script.write_text("#!/bin/sh\necho \"where: $(pwd)\"\n")
    script.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    step = spawn_step(1, ["whereami"], info=[("wdir", str(work)), ("path", str(bindir)),
                                            ("unknown_key", "ignored")])
    p = L.run(["-n", "1", L.dynprobe] + step, marker=marker, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ops(p.stdout, "spawn")[0]["rc"] == "0"
    assert f"where: {work}" in p.stdout


def test_universe_size(dynprobe, marker):
    L = dynprobe
    p = L.run(["-usize", "7", "-n", "2", L.dynprobe], marker=marker, timeout=30)
    assert p.returncode == 0, p.stderr
    assert {d[0]["universe"] for d in dyn(p.stdout)[0].values()} == {"7"}
    p = L.run(["-hosts", "localhost:3,127.0.0.1:2", "-n", "1", L.dynprobe], marker=marker,
              timeout=30)
    assert p.returncode == 0, p.stderr
    assert dyn(p.stdout)[0][0][0]["universe"] == "5"
    # Spawned children see the parent job's universe.
    step = spawn_step(2, child_cmd(L, marker))
    p = L.run(["-usize", "6", "-n", "1", L.dynprobe] + step, marker=marker, timeout=30)
    assert {c[0]["universe"] for c in dyn(p.stdout)[1].values()} == {"6"}, p.stdout


def test_publish_lookup_across_two_mpiexecs(dynprobe, marker, tmp_path):
    L = dynprobe
    nsfile, ready, go = tmp_path / "ns", tmp_path / "ready", tmp_path / "go"
    server = L.popen(["-nameserver-file", str(nsfile), "-n", "1", L.dynprobe,
                      "pub", "ocean", "tcp:port-of-ocean", "touch", str(ready),
                      "waitfile", str(go), "look", "land", "unpub", "ocean"], marker=marker)
    try:
        deadline = time.monotonic() + 20
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the first job did not publish"
        st = os.stat(nsfile)
        assert stat.S_IMODE(st.st_mode) == 0o600
        addr = nsfile.read_text().strip()
        # By file path, by the address line in WEFT_NAMESERVER; both wires.
        p = L.run(["-nameserver", str(nsfile), "-n", "2", L.dynprobe, "look", "ocean",
                   "pub", "ocean", "mine", "pub", "land", "tcp:land", "look", "nothing"],
                  marker=marker, timeout=30)
        assert p.returncode == 0, p.stdout + p.stderr
        assert ops(p.stdout, "look")[0]["port"] == "tcp:port-of-ocean"
        assert [o["rc"] for o in ops(p.stdout, "pub")] == ["DUPLICATE", "0"]
        assert ops(p.stdout, "look")[1]["rc"] == "NOT_FOUND"
        p = L.run(["-n", "1", L.dynprobe, "look", "ocean"], marker=marker, timeout=30,
                  env={"WEFT_NAMESERVER": addr, "WEFT_PMI_VERSION": "2"})
        assert ops(p.stdout, "look")[0]["port"] == "tcp:port-of-ocean", p.stdout + p.stderr
        # A wrong secret is refused; the server job goes on.
        host, port, secret = addr.rsplit(":", 2)
        forged = f"{host}:{port}:{'0' * len(secret)}"
        p = L.run(["-n", "1", L.dynprobe, "look", "ocean"], marker=marker, timeout=30,
                  env={"WEFT_NAMESERVER": forged})
        assert ops(p.stdout, "look")[0]["rc"] == "GENERIC", p.stdout + p.stderr
    finally:
        go.touch()
        out, err = server.communicate(timeout=30)
    assert server.returncode == 0, out + err
    assert ops(out, "look")[0]["port"] == "tcp:land"  # published by the second job
    assert ops(out, "unpub")[0]["rc"] == "0"
    assert "refused" in err or "failed" in err or "wrong" in err, err
    assert not nsfile.exists(), "the address file is removed at exit"


def test_bad_nameserver_address_is_a_usage_error(dynprobe):
    p = dynprobe.run(["-nameserver", "1.2.3.4:5", "-n", "1", dynprobe.dynprobe], timeout=30)
    assert p.returncode == 2 and "host:port:secret" in p.stderr


def test_singleton_spawn(dynprobe, marker):
    L = dynprobe
    step = spawn_step(2, child_cmd(L, marker, "--preput", "k"), preput=[("k", "from-singleton")])
    env = L.env({"PATH": os.path.join(PREFIX, "bin") + ":" + os.environ.get("PATH", ""),
                 "WEFT_TEST_MARKER": marker})
    p = subprocess.run([L.dynprobe] + step, capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ops(p.stdout, "spawn")[0]["rc"] == "0", p.stdout + p.stderr
    # The children run on after the singleton returns; wait for them.
    deadline = time.monotonic() + 20
    from conftest import marked_pids
    while marked_pids(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert_no_leftovers(marker)


def test_singleton_spawn_without_mpiexec(dynprobe, tmp_path):
    L = dynprobe
    env = L.env({"PATH": str(tmp_path)})
    p = subprocess.run([L.dynprobe] + spawn_step(1, ["/bin/true"]), capture_output=True,
                       text=True, timeout=30, env=env)
    sp = ops(p.stdout, "spawn")[0]
    assert sp["rc"] == "SPAWN" and sp["errcodes"] == "1"
    assert "mpiexec" in p.stdout


@pytest.mark.parametrize("version", [1, 2])
def test_hydra_serves_the_same_wire(dynprobe, marker, version):
    # The client's spawn and name messages are the documented PMI forms:
    # MPICH's hydra understands them too (preput through its KVS).
    L = dynprobe
    if not os.path.exists(L.hydra):
        pytest.skip(f"MPICH hydra not found at {L.hydra} "
                    "(set WEFT_PEER_MPICH_PREFIX to a venv with the mpich wheel)")
    step = spawn_step(2, child_cmd(L, marker, "--preput", "k"), preput=[("k", "via-hydra")])
    p = subprocess.run([L.hydra, "-genv", "WEFT_TEST_MARKER", marker, "-n", "2", L.dynprobe] +
                       step + ["pub", "h", "hp", "look", "h", "unpub", "h", "look", "h"],
                       capture_output=True, text=True, timeout=60,
                       env=L.env({"WEFT_PMI_VERSION": str(version)}))
    assert p.returncode == 0, p.stdout + p.stderr
    assert ops(p.stdout, "spawn")[0]["rc"] == "0"
    assert p.stdout.count("preput k=via-hydra") == 2, p.stdout
    assert [(o["rc"], o.get("port")) for o in ops(p.stdout, "look")] == [("0", "hp"),
                                                                         ("NOT_FOUND", "")]


@pytest.mark.parametrize("version", [1, 2])
def test_spawn_multiple_programs(dynprobe, marker, version):
    # Two commands, one job: consecutive ranks, appnum = command index, each
    # with its own program and arguments.
    L = dynprobe
    second = ["/usr/bin/env", f"WEFT_TEST_MARKER={marker}", "sh", "-c",
              'echo "second $PMI_RANK args $1 $2"; exec "$0" "$@"', L.dynprobe]
    step = spawnm_step([(2, child_cmd(L, marker), []), (3, second + ["--preput", "k"], [])],
                       preput=[("k", "both")])
    p = L.run(["-n", "2", L.dynprobe] + step, env={"WEFT_PMI_VERSION": str(version)},
              marker=marker, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ops(p.stdout, "spawn")[0]["errcodes"] == "0,0,0,0,0", p.stdout + p.stderr
    children = dyn(p.stdout)[1]
    assert sorted(children) == list(range(5))
    assert [children[r][0]["appnum"] for r in range(5)] == ["0", "0", "1", "1", "1"]
    assert {children[r][0]["size"] for r in range(5)} == {"5"}
    for r in (2, 3, 4):
        assert f"second {r} args --preput k" in p.stdout
    assert p.stdout.count("preput k=both") == 3


def test_mpmd_command_line(dynprobe, marker):
    L = dynprobe
    p = L.run(["-n", "2", L.dynprobe, ":", "-n", "1", L.dynprobe], marker=marker, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    parents = dyn(p.stdout)[0]
    assert [parents[r][0]["appnum"] for r in range(3)] == ["0", "0", "1"]
    p = L.run(["-n", "1", L.dynprobe, ":"], timeout=30)
    assert p.returncode == 2 and "followed by a program" in p.stderr
