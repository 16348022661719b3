# SPDX-License-Identifier: BSD-3-Clause
"""Per-rank recorder around mpi4py's own test runner (test/main.py).

Run under mpirun as:  python mpi4py_harness.py OUTDIR MAIN_PY [main.py args]

Every rank appends one JSON object per line to OUTDIR/rank<R>.jsonl:
  {"ev": "start", "id": ..., "t": ...}          before a test runs
  {"ev": "end", "id": ..., "outcome": ..., "dt": ..., "msg": ...}
with outcome one of ok, fail, error, skip, xfail (unittest's expected
failure) and xpass (unexpected success). Lines are flushed as they are
written, so after a crash or a hang the last "start" without an "end" names
the test that was running. Console output is mpi4py's usual verbose text.
"""
import json
import os
import runpy
import sys
import time
import traceback
import unittest


def _rank():
    for var in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"):
        if var in os.environ:
            return int(os.environ[var])
    return 0


_REC = []


class _Recorder:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115
        self.t0 = {}

    def emit(self, **rec):
        self.f.write(json.dumps(rec) + "\n")
        self.f.flush()


def _text(err):
    if err is None:
        return ""
    if isinstance(err, str):
        return err
    etype, value, tb = err
    return "".join(traceback.format_exception(etype, value, tb))[-4000:]


def install(outdir):
    rec = _Recorder(os.path.join(outdir, f"rank{_rank()}.jsonl"))
    _REC.append(rec)
    base = unittest.TextTestResult

    class Result(base):
        def startTest(self, test):
            rec.t0[test.id()] = time.monotonic()
            rec.emit(ev="start", id=test.id(), t=time.time())
            super().startTest(test)

        def _end(self, test, outcome, msg=""):
            tid = test.id()
            dt = time.monotonic() - rec.t0.get(tid, time.monotonic())
            rec.emit(ev="end", id=tid, outcome=outcome, dt=round(dt, 3), msg=msg)

        def addSuccess(self, test):
            super().addSuccess(test)
            # a test whose subtests failed already reported its failure
            if not getattr(test, "_weft_subfail", False):
                self._end(test, "ok")

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._end(test, "fail", _text(err))

        def addError(self, test, err):
            super().addError(test, err)
            # errors in setUpClass/setUpModule come with a _ErrorHolder
            self._end(test, "error", _text(err))

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._end(test, "skip", str(reason))

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._end(test, "xfail", _text(err))

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._end(test, "xpass")

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None and not getattr(test, "_weft_subfail", False):
                test._weft_subfail = True
                failure = issubclass(err[0], test.failureException)
                self._end(test, "fail" if failure else "error",
                          f"subtest {subtest._subDescription()}\n" + _text(err))

    unittest.TextTestRunner.resultclass = Result


def main():
    outdir, mainpy = sys.argv[1], sys.argv[2]
    install(outdir)
    sys.argv = [mainpy] + sys.argv[3:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(mainpy)))
    sys.dont_write_bytecode = True
    code = 0
    try:
        runpy.run_path(mainpy, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
    # Test failures are read from the records, so the rank exits 0: a rank
    # that exits non-zero first would make mpirun kill the others while they
    # still record. A crash, an abort or a hang still shows in mpirun's code
    # and in a missing "done" record.
    _REC[0].emit(ev="done", code=code if isinstance(code, int) else 1)
    sys.exit(0)


if __name__ == "__main__":
    main()
