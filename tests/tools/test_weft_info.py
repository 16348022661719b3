# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""weft-info: version, build configuration, every tunable with its source, bad
values rejected naming the variable, and the generated references (docs/tunables.md,
include/mpi.h, tests/unit/test_mpi_h.c) are current."""
import os
import re
import subprocess
import sys

import pytest

from conftest import PREFIX, REPO, need, run

WEFT_INFO = os.path.join(PREFIX, "bin", "weft-info")
DEF = os.path.join(REPO, "src", "util", "tunables.def")


def table():
    """(name, aliases) of every row of tunables.def, comments stripped."""
    with open(DEF) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    rows = []
    for m in re.finditer(r"WEFT_TUNABLE\(\s*(\w+)\s*,(.*?)\)\s*(?=WEFT_TUNABLE\(|$)", text, re.S):
        strings = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
        # string fields in order: DEFAULT, VALUES, ALIASES, HELP
        aliases = [a for a in strings[2].split(",") if a] if len(strings) >= 4 else []
        rows.append((m.group(1), aliases))
    assert rows, "no rows parsed from tunables.def"
    return rows


def clean_env(**extra):
    """The environment without any WEFT_*/MV2_* variable, plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("WEFT_") or k.startswith("MV2_"))}
    env.update(extra)
    return env


def weft_info(*args, check=True, **env):
    p = subprocess.run([need(WEFT_INFO), *args], capture_output=True, text=True, timeout=60,
                       env=clean_env(**env))
    if check and p.returncode != 0:
        raise AssertionError(f"weft-info {args} exited {p.returncode}: {p.stderr}")
    return p


def tunable_lines(out):
    """{WEFT_NAME: (value, source)} from the --tunables listing."""
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^\s+(WEFT_\w+)\s+(\S+)\s+(.+?)\s*$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def test_version_and_config():
    with open(os.path.join(REPO, "VERSION")) as f:
        version = f.read().strip()
    out = weft_info().stdout
    assert f"Weft {version}" in out.splitlines()[0]
    for key in ("prefix", "build type", "C compiler", "hwloc", "CMA", "sanitizers"):
        assert re.search(rf"^\s+{key}\s+\S", out, re.M), f"no '{key}' in:\n{out}"
    m = re.search(r"^\s+prefix\s+(\S+)$", out, re.M)
    assert m and os.path.realpath(m.group(1)) == os.path.realpath(PREFIX), out


def test_all_lists_every_tunable_with_default_source():
    out = weft_info("-a").stdout
    assert "Build configuration:" in out and "Tunables (" in out
    rows = tunable_lines(out)
    names = [f"WEFT_{n}" for n, _ in table()]
    assert sorted(rows) == sorted(names)
    for name in names:
        assert rows[name][1] == "default", f"{name}: {rows[name]}"
    # the shipped default, in bytes (tuned by measurement; docs/performance.md)
    assert rows["WEFT_SMP_EAGERSIZE"][0] == "8192"


def test_env_and_alias_sources():
    out = weft_info("--tunables", MV2_SMP_EAGERSIZE="32k", WEFT_CPU_BINDING_POLICY="scatter").stdout
    rows = tunable_lines(out)
    assert rows["WEFT_SMP_EAGERSIZE"] == ("32768", "alias MV2_SMP_EAGERSIZE")
    assert rows["WEFT_CPU_BINDING_POLICY"] == ("scatter", "env WEFT_CPU_BINDING_POLICY")
    # WEFT_ wins over the MV2_ alias
    rows = tunable_lines(weft_info("--tunables", MV2_SMP_EAGERSIZE="32k",
                                   WEFT_SMP_EAGERSIZE="1m").stdout)
    assert rows["WEFT_SMP_EAGERSIZE"] == ("1048576", "env WEFT_SMP_EAGERSIZE")


@pytest.mark.parametrize("var,value", [("WEFT_SMP_EAGERSIZE", "banana"),
                                       ("MV2_SMP_EAGERSIZE", "-1"),
                                       ("WEFT_CPU_BINDING_POLICY", "diagonal"),
                                       ("MV2_ENABLE_AFFINITY", "maybe")])
def test_bad_value_exits_1_naming_the_variable(var, value):
    p = weft_info(check=False, **{var: value})
    assert p.returncode == 1
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert var in lines[0] and value in lines[0]
    assert p.stdout == ""


def test_unknown_option():
    p = weft_info("--bogus", check=False)
    assert p.returncode == 2 and "--bogus" in p.stderr


def test_markdown_lists_every_row_and_alias():
    md = weft_info("--tunables", "--markdown").stdout
    for name, aliases in table():
        assert f"| `WEFT_{name}` |" in md, name
        for a in aliases:
            assert f"`{a}`" in md, a


def test_markdown_ignores_environment():
    assert (weft_info("--tunables", "--markdown", WEFT_SMP_EAGERSIZE="banana").stdout
            == weft_info("--tunables", "--markdown").stdout)


def test_docs_tunables_is_current():
    with open(os.path.join(REPO, "docs", "tunables.md")) as f:
        doc = f.read()
    assert doc == weft_info("--tunables", "--markdown").stdout, (
        "docs/tunables.md is stale: run `ninja -C build weft-docs` and commit it")


@pytest.mark.parametrize("script", ["gen_mpi_h.py", "gen_mpi_h_test.py"])
def test_generated_sources_are_current(script):
    run([sys.executable, os.path.join(REPO, "maint", script), "--check"], timeout=60)


def test_pvars_lists_every_row_of_the_tables():
    """weft-info --pvars lists every row of pvars.def and events.def by its MPI_T name."""
    out = weft_info("--pvars").stdout
    for table, macro in (("pvars.def", "WEFT_PVAR"), ("events.def", "WEFT_EVENT")):
        text = open(os.path.join(REPO, "src", "core", "mpit", table)).read()
        names = re.findall(rf"^{macro}\((\w+),", text, re.M)
        assert names, table
        for name in names:
            assert re.search(rf"^  weft_{name.lower()}\s", out, re.M), f"{name} missing:\n{out}"
    assert re.search(r"^  weft_comm_msgs_sent\s+COUNTER\s+comm\s", out, re.M), out
