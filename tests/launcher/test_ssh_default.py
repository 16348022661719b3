# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""The default remote launcher (ssh) gets a correct command line.

A fake `ssh` first on PATH records its argv and runs the remote command here,
so the whole path (mpiexec -> ssh HOST 'script' -> weft-proxy connecting
back, secret on stdin) runs on this machine with host names that do not
resolve. Asserted: ssh's words (-x, BatchMode, the host as given, one
command string), the script execs weft-proxy from the install prefix with
the host's label, nothing secret on the command line, and the job's output.
"""
import glob
import os

import pytest

from conftest import PREFIX

FAKE_SSH = """#!/bin/sh
log="$FAKE_SSH_LOG.$$"
for a in "$@"; do printf '%s\\n--arg-end--\\n' "$a" >> "$log"; done
while [ $# -gt 1 ]; do
  case "$1" in
    -*) shift ;;
    *) shift; break ;;
  esac
done
exec /bin/sh -c "$1"
"""


def test_ssh_command_line(launcher, marker, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    ssh = bindir / "ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    log = tmp_path / "ssh-argv"
    env = {"PATH": f"{bindir}:{os.environ.get('PATH', '')}", "FAKE_SSH_LOG": str(log)}
    p = launcher.run(["-hosts", "node-a.invalid:2,node-b.invalid:1", "-l", "sh", "-c",
                      'echo "rank $PMI_RANK of $PMI_SIZE"'], env=env, marker=marker, timeout=60)
    if "no address" in p.stderr or "no non-loopback" in p.stderr:
        pytest.skip(f"no non-loopback interface to advertise: {p.stderr.strip()}")
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(p.stdout.splitlines()) == [f"[{r}] rank {r} of 3" for r in range(3)]
    calls = []
    for f in glob.glob(f"{log}.*"):
        with open(f) as fh:
            calls.append(fh.read().split("\n--arg-end--\n")[:-1])
    assert len(calls) == 2, calls
    hosts = set()
    for argv in calls:
        assert argv[:2] == ["-x", "-oBatchMode=yes"] and len(argv) == 4, argv
        host, script = argv[2], argv[3]
        hosts.add(host)
        proxy = os.path.join(PREFIX, "bin", "weft-proxy")
        assert script.startswith(f"if [ -x '{proxy}' ]; then exec '{proxy}' '--connect' "), script
        assert f"'--host' '{host}'" in script
        assert "exit 127" in script  # a host without Weft says so
        # The job secret travels on stdin, never in ssh's argv.
        assert "secret" not in script.lower() and not any(len(w) >= 64 and
                                                          all(c in "0123456789abcdef" for c in w)
                                                          for w in script.replace("'", " ").split())
    assert hosts == {"node-a.invalid", "node-b.invalid"}
