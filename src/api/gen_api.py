#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Generate Weft's MPI entry points from maint/abi/functions.tsv and the
parameter-kind overlay in src/api/kinds/*.txt (STYLE.md section 3.6).

For every ABI function the output has PMPI_X (strong) and MPI_X (weak alias):
  * listed in kinds with parameter kinds -> checks + handle conversion + one
    call to weft_<x>_impl() + error dispatch;
  * listed with ': custom' -> nothing here (hand-written in src/api/custom);
  * not listed -> a stub returning MPI_ERR_UNSUPPORTED_OPERATION through the
    error handler.
It also writes api_impl.h (the impl prototypes, included by the modules that
define them so signatures are checked) and STATUS.md.

kinds line grammar (one function per line, '#' comments):
  MPI_Name [param=KIND ...] [: directive ...]
KINDs: COMM COMM_OR_NULL INTRACOMM DATATYPE DATATYPE_ANY DATATYPE_OR_NULL OP
  OP_ANY INFO INFO_NOTNULL ERRHANDLER GROUP GROUP_OR_NULL COUNT NONNEG
  BUF(count,datatype) RANK(comm) DEST(comm) SOURCE(comm) TAG RECV_TAG OUT
  REQUEST_OUT REQUEST_INOUT WIN WIN_OR_NULL SESSION FILE RAW
Directives: custom  noinit  impl=<name>  errobj=<param>  nocheck  coll
  errobj=file:<C expression> sends errors to the handler of that MPI_File
  (MPI_File_open/delete: MPI_FILE_NULL; MPI_File_close: *fh).

Collectives (directive coll): the impl itself is generated too, into
coll_gen.c, with the prototypes of what it calls in coll_gen.h. Every form of
a collective X (blocking, MPI_IX non-blocking, X_init persistent, and their
_c large-count twins) calls one hand-written weft_coll_call_<x>() in
src/coll/coll_api.c with the large-count argument shapes plus a mode
(WEFT_COLL_MODE_BLOCKING / _NONBLOCKING / _PERSISTENT of coll_internal.h, from
the name) and the request (NULL when blocking); a persistent form's info is
not passed. int arrays of counts or displacements are widened to MPI_Count / MPI_Aint first,
so they need a kind saying how many elements are significant at this rank:
  COUNTS(len) DISPLS(len), len one of: peer (comm's peer group size), size
  (comm's size), root (peer group size at the root, else 0), indeg / outdeg
  (topology in- / out-degree).
Handle parameters passed by value and not named get the default kind of their
type (COMM, DATATYPE, OP, INFO, ERRHANDLER, GROUP, WIN, SESSION).
A function X whose twin X_c exists shares X_c's impl when the two differ only
in scalar int -> MPI_Count/MPI_Aint parameters; otherwise X_c needs its own line.
"""
import argparse
import csv
import pathlib
import re
import sys

HANDLE_KIND = {
    "MPI_Comm": ("comm", "COMM"),
    "MPI_Datatype": ("datatype", "DATATYPE"),
    "MPI_Op": ("op", "OP"),
    "MPI_Info": ("info", "INFO"),
    "MPI_Errhandler": ("errhandler", "ERRHANDLER"),
    "MPI_Group": ("group", "GROUP"),
    "MPI_Win": ("win", "WIN"),
    "MPI_Session": ("session", "SESSION"),
    "MPI_File": ("file", "FILE"),
}

# kind -> (internal C type of the impl parameter, converter, null allowed,
#          error class, what)
CONVERT = {
    "COMM": ("weft_comm_t *", "comm", False, "MPI_ERR_COMM", "communicator"),
    "COMM_OR_NULL": ("weft_comm_t *", "comm", True, "MPI_ERR_COMM", "communicator"),
    "INTRACOMM": ("weft_comm_t *", "comm", False, "MPI_ERR_COMM", "communicator"),
    "DATATYPE": ("weft_datatype_t *", "datatype", False, "MPI_ERR_TYPE", "datatype"),
    "DATATYPE_ANY": ("weft_datatype_t *", "datatype", False, "MPI_ERR_TYPE", "datatype"),
    "DATATYPE_OR_NULL": ("weft_datatype_t *", "datatype", True, "MPI_ERR_TYPE", "datatype"),
    "OP": ("weft_op_t *", "op", False, "MPI_ERR_OP", "operation"),
    "OP_ANY": ("weft_op_t *", "op", True, "MPI_ERR_OP", "operation"),
    "INFO": ("weft_info_t *", "info", True, "MPI_ERR_INFO", "info object"),
    "INFO_NOTNULL": ("weft_info_t *", "info", False, "MPI_ERR_INFO", "info object"),
    "ERRHANDLER": ("weft_errhandler_t *", "errhandler", False, "MPI_ERR_ERRHANDLER",
                   "error handler"),
    "GROUP": ("weft_group_t *", "group", False, "MPI_ERR_GROUP", "group"),
    "GROUP_OR_NULL": ("weft_group_t *", "group", True, "MPI_ERR_GROUP", "group"),
    "WIN": ("weft_win_t *", "win", False, "MPI_ERR_WIN", "window"),
    "WIN_OR_NULL": ("weft_win_t *", "win", True, "MPI_ERR_WIN", "window"),
    "SESSION": ("weft_session_t *", "session", False, "MPI_ERR_SESSION", "session"),
    "FILE": ("weft_file_t *", "file", False, "MPI_ERR_FILE", "file"),
}

SCALAR_WIDEN = {("int", "MPI_Count"), ("int", "MPI_Aint"), ("MPI_Aint", "MPI_Count")}

# Collectives: how many elements of a COUNTS/DISPLS array are significant
# (helpers in src/coll/coll_api.c).
COLL_ARRAY_LEN = {
    "peer": "comm->peer_size",
    "size": "comm->size",
    "root": "weft_coll_root_peers(root, comm)",
    "indeg": "weft_coll_topo_degree(comm, 0)",
    "outdeg": "weft_coll_topo_degree(comm, 1)",
}
COLL_ARRAY_WIDE = {"COUNTS": ("MPI_Count", "weft_coll_widen_counts"),
                   "DISPLS": ("MPI_Aint", "weft_coll_widen_displs")}


class Param:
    def __init__(self, text):
        text = text.strip()
        self.text = text
        self.array = ""
        m = re.match(r"^(.*?)(\w+)\s*((?:\[[^\]]*\])*)$", text)
        if text == "...":
            self.ctype, self.name = "...", ""
            return
        if not m:
            raise ValueError(f"cannot parse parameter {text!r}")
        self.ctype = m.group(1).strip()
        self.name = m.group(2)
        self.array = m.group(3)

    def decl(self, name=None, ctype=None):
        if self.ctype == "...":
            return "..."
        ctype = ctype or self.ctype
        sep = "" if ctype.endswith("*") else " "
        return f"{ctype}{sep}{name or self.name}{self.array}"

    @property
    def base_type(self):
        return self.ctype.replace("const ", "").strip()


class Function:
    def __init__(self, row):
        self.name = row["name"]
        self.category = row["category"]
        sig = row["signature"].rstrip(";")
        m = re.match(r"^(.*?)\b(MPI_\w+)\((.*)\)$", sig)
        self.ret = m.group(1).strip()
        args = m.group(3).strip()
        self.params = [] if args in ("", "void") else [Param(a) for a in split_args(args)]
        self.kinds = {}
        self.directives = {}
        self.listed = False

    def signature(self, prefix):
        params = ", ".join(p.decl() for p in self.params) or "void"
        sep = "" if self.ret.endswith("*") else " "
        return f"{self.ret}{sep}{prefix}{self.name[4:]}({params})"


def split_args(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def read_kinds(kinds_dir, funcs):
    for path in sorted(pathlib.Path(kinds_dir).glob("*.txt")):
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            head, _, tail = line.partition(":")
            words = head.split()
            name = words[0]
            where = f"{path.name}:{lineno}"
            if name not in funcs:
                sys.exit(f"{where}: {name} is not an ABI function")
            f = funcs[name]
            if f.listed:
                sys.exit(f"{where}: {name} listed twice")
            f.listed = True
            pnames = {p.name for p in f.params}
            for w in words[1:]:
                pname, _, kind = w.partition("=")
                if pname not in pnames:
                    sys.exit(f"{where}: {name} has no parameter {pname}")
                f.kinds[pname] = kind
            for d in tail.split():
                key, _, val = d.partition("=")
                f.directives[key] = val or True


def kind_of(f, p):
    k = f.kinds.get(p.name)
    if k:
        return k
    if p.base_type in HANDLE_KIND and not p.array:
        return HANDLE_KIND[p.base_type][1]
    return "RAW"


def impl_name(f):
    if "impl" in f.directives:
        return f.directives["impl"]
    return "weft_" + f.name[4:].lower() + "_impl"


def shares_c_impl(base, twin):
    """True when base and its _c twin differ only by widened scalars."""
    if len(base.params) != len(twin.params) or base.ret != twin.ret:
        return False
    for a, b in zip(base.params, twin.params):
        if a.ctype == b.ctype and a.array == b.array:
            continue
        if a.array or b.array or (a.base_type, b.base_type) not in SCALAR_WIDEN:
            return False
    return True


def impl_params(f, typesrc):
    """Parameters of the impl: converted handles, widened scalars."""
    out = []
    for p, tp in zip(f.params, typesrc.params):
        k = kind_of(f, p)
        if k in CONVERT:
            out.append(p.decl(ctype=CONVERT[k][0]))
        else:
            out.append(tp.decl(name=p.name))
    return out


def error_object(f):
    if "errobj" in f.directives:
        return f.directives["errobj"]
    for pref in ("comm", "win", "file", "fh", "session"):
        for p in f.params:
            if p.name == pref and not p.array and p.base_type in (
                    "MPI_Comm", "MPI_Win", "MPI_File", "MPI_Session"):
                return p.name
    return None


def gen_checks(f):
    """C statements: convert handles and check arguments; on error goto fail."""
    lines = []
    pmap = {p.name: p for p in f.params}
    check = "nocheck" not in f.directives

    def fail(cls, arg, fmt, *vals):
        v = "".join(", " + x for x in vals)
        return (f'{{ rc = weft_err_arg({cls}, "{arg}", "{fmt}"{v}); goto fail; }}')

    # Handles first, so later checks (ranks, buffers) can use the objects.
    for p in f.params:
        k = kind_of(f, p)
        if k not in CONVERT:
            continue
        ctype, conv, nullok, cls, what = CONVERT[k]
        obj = f"{p.name}_obj"
        lines.append(f"{ctype}{obj} = weft_{conv}_from_handle({p.name});")
        if nullok:
            lines.append(f"if ({obj} == NULL && {p.name} != (void *)WEFT_NULL_HANDLE_{conv.upper()}"
                         f" && weft_api_arg_check) " + fail(cls, p.name, f"invalid {what}"))
        else:
            lines.append(f"if ({obj} == NULL) "
                         + fail(cls, p.name,
                                f"invalid {what}%s", f'{p.name} == (void *)WEFT_NULL_HANDLE_{conv.upper()} ? " (null handle)" : ""'))
        if k == "DATATYPE" and check:
            lines.append(f"if (weft_api_arg_check && !weft_datatype_is_committed({obj})) "
                         + fail("MPI_ERR_TYPE", p.name, "datatype is not committed"))
        if k == "INTRACOMM" and check:
            lines.append(f"if (weft_api_arg_check && weft_comm_is_inter({obj})) "
                         + fail("MPI_ERR_COMM", p.name, "intercommunicator not allowed"))
    if not check:
        return lines
    body = []
    for p in f.params:
        k = kind_of(f, p)
        m = re.match(r"^(\w+)(?:\(([^)]*)\))?$", k)
        kname, args = m.group(1), (m.group(2) or "")
        a = [x.strip() for x in args.split(",")] if args else []
        if kname in ("COUNT", "NONNEG"):
            body.append(f"if ({p.name} < 0) " + fail("MPI_ERR_COUNT" if kname == "COUNT" else "MPI_ERR_ARG",
                                                      p.name, f"negative value %lld", f"(long long){p.name}"))
        elif kname == "BUF":
            cnt, dt = a
            body.append(f"if ({p.name} == NULL && {cnt} > 0 && weft_datatype_is_builtin({dt}_obj)) "
                        + fail("MPI_ERR_BUFFER", p.name, "NULL buffer with count %lld", f"(long long){cnt}"))
        elif kname in ("RANK", "DEST", "SOURCE"):
            comm = a[0] if a else "comm"
            allowed = {"RANK": "0", "DEST": f"{p.name} == MPI_PROC_NULL",
                       "SOURCE": f"{p.name} == MPI_PROC_NULL || {p.name} == MPI_ANY_SOURCE"}[kname]
            body.append(f"if (!({allowed}) && ({p.name} < 0 || {p.name} >= weft_comm_peer_size({comm}_obj))) "
                        + fail("MPI_ERR_RANK", p.name, "rank %d is out of range (communicator has %d ranks)",
                               p.name, f"weft_comm_peer_size({comm}_obj)"))
        elif kname == "TAG":
            body.append(f"if ({p.name} < 0 || {p.name} > WEFT_TAG_UB) "
                        + fail("MPI_ERR_TAG", p.name, "tag %d is out of range 0..%d", p.name, "WEFT_TAG_UB"))
        elif kname == "RECV_TAG":
            body.append(f"if ({p.name} != MPI_ANY_TAG && ({p.name} < 0 || {p.name} > WEFT_TAG_UB)) "
                        + fail("MPI_ERR_TAG", p.name, "tag %d is out of range 0..%d", p.name, "WEFT_TAG_UB"))
        elif kname in ("OUT", "REQUEST_OUT", "REQUEST_INOUT"):
            cls = "MPI_ERR_REQUEST" if kname.startswith("REQUEST") else "MPI_ERR_ARG"
            body.append(f"if ({p.name} == NULL) " + fail(cls, p.name, "NULL pointer for an output argument"))
    if body:
        lines.append("if (weft_api_arg_check) {")
        lines += ["    " + b for b in body]
        lines.append("}")
    return lines


WRAPPER = """\
WEFT_API {sig}
{{
    int rc;
    WEFT_API_ENTER("{name}", {init_check});
{checks}
    rc = {impl}({args});
    if (rc != MPI_SUCCESS) {{
        goto fail;
    }}
    WEFT_API_EXIT_AS({call_class});
    return MPI_SUCCESS;
fail:
    WEFT_API_EXIT_AS({call_class});
    return {dispatch};
}}
WEFT_API_ALIAS({name})
"""

STUB = """\
WEFT_API {sig}
{{
{voids}    return {dispatch_open}weft_api_unsupported("{name}"){dispatch_close};
}}
WEFT_API_ALIAS({name})
"""


def gen_wrapper(f, funcs):
    twin = funcs.get(f.name + "_c")
    base = funcs.get(f.name[:-2]) if f.name.endswith("_c") else None
    impl = impl_name(f)
    if base is not None and not f.listed and base.listed and shares_c_impl(base, f):
        # The _c twin of a listed function: same impl, its own (wider) types.
        impl = impl_name(base)
        f = merge_kinds(f, base)
    args = []
    for p in f.params:
        k = kind_of(f, p)
        args.append(f"{p.name}_obj" if k in CONVERT else p.name)
    eo = error_object(f)
    if eo and eo.startswith("file:"):
        disp = f"weft_err_dispatch_file({eo[5:]}, rc)"
    elif eo:
        etype = next(p for p in f.params if p.name == eo).base_type
        conv = {"MPI_Comm": "comm", "MPI_Win": "win", "MPI_File": "file",
                "MPI_Session": "session"}[etype]
        disp = f"weft_err_dispatch_{conv}({eo}, rc)"
    else:
        disp = "weft_err_dispatch_comm(MPI_COMM_SELF, rc)"
    checks = "\n".join("    " + l for l in gen_checks(f))
    return WRAPPER.format(sig=f.signature("PMPI_"), name=f.name, checks=checks, impl=impl,
                          args=", ".join(args), dispatch=disp, call_class=call_class(f),
                          init_check="0" if "noinit" in f.directives else "1")


def call_class(f):
    """The weft_call_class_t (core/mpit/mpi_time.h) the report's time in MPI is
    split by: the function's category in functions.tsv."""
    cls = {"pt2pt": "PT2PT", "coll": "COLL", "rma": "RMA", "io": "IO"}.get(f.category, "OTHER")
    return "WEFT_CALL_" + cls


def merge_kinds(twin, base):
    twin.kinds = dict(base.kinds)
    twin.directives = {k: v for k, v in base.directives.items() if k != "impl"}
    twin.listed = True
    twin.shares_impl = True  # calls base's impl: nothing of its own to generate
    return twin


def impl_prototype(f, funcs):
    twin = funcs.get(f.name + "_c")
    typesrc = twin if twin is not None and shares_c_impl(f, twin) else f
    params = impl_params(f, typesrc) or ["void"]
    return f"int {impl_name(f)}({', '.join(params)});"


def is_implemented(f, funcs):
    if f.listed:
        return True
    if f.name.endswith("_c"):
        base = funcs.get(f.name[:-2])
        return base is not None and base.listed and shares_c_impl(base, f)
    return False


def coll_form(f, funcs):
    """(mode, blocking function) of a collective entry point, from its name."""
    name = f.name
    if name.endswith("_c") and name[:-2] in funcs:
        name = name[:-2]
    if name.endswith("_init"):
        return "PERSISTENT", funcs[name[:-5]]
    blocking = "MPI_" + name[5:6].upper() + name[6:]
    if name[4] == "I" and blocking in funcs:
        return "NONBLOCKING", funcs[blocking]
    return "BLOCKING", funcs[name]


def coll_call_name(blocking):
    return "weft_coll_call_" + blocking.name[4:].lower()


def coll_call_prototype(blocking, funcs):
    """weft_coll_call_<x>(): the blocking form's parameters with handles
    converted and counts, displacements and scalars in their large-count
    types (from the _c twin), then the mode and the request."""
    typesrc = funcs.get(blocking.name + "_c", blocking)
    params = []
    for p, tp in zip(blocking.params, typesrc.params):
        k = kind_of(blocking, p)
        params.append(p.decl(ctype=CONVERT[k][0]) if k in CONVERT else tp.decl(name=p.name))
    params += ["int mode", "MPI_Request *request"]
    return f"int {coll_call_name(blocking)}({', '.join(params)})"


def gen_coll_impl(f, funcs):
    """The impl of collective entry point f: widen int arrays, then call
    weft_coll_call_<x>() in f's mode."""
    mode, blocking = coll_form(f, funcs)
    twin = funcs.get(f.name + "_c")
    typesrc = twin if twin is not None and shares_c_impl(f, twin) else f
    head = f"int {impl_name(f)}({', '.join(impl_params(f, typesrc)) or 'void'})"
    pmap = {p.name: p for p in f.params}
    pre, post, args = [], [], []
    for bp in blocking.params:
        p = pmap.get(bp.name)
        if p is None:
            sys.exit(f"{f.name}: no parameter {bp.name} of {blocking.name}")
        m = re.match(r"^(COUNTS|DISPLS)\((\w+)\)$", kind_of(f, p))
        if p.array and p.base_type == "int":
            if not m or m.group(2) not in COLL_ARRAY_LEN:
                sys.exit(f"{f.name}: int array {p.name} needs kind COUNTS(len) or DISPLS(len), "
                         f"len one of {', '.join(COLL_ARRAY_LEN)}")
            wtype, widen = COLL_ARRAY_WIDE[m.group(1)]
            pre.append(f"{wtype} {p.name}_s[WEFT_COLL_WIDEN_STACK], *{p.name}_w = NULL;")
            post.append(f"{widen}({p.name}, {COLL_ARRAY_LEN[m.group(2)]}, {p.name}_s, &{p.name}_w)")
            args.append(f"{p.name}_w")
        else:
            args.append(p.name)
    args += [f"WEFT_COLL_MODE_{mode}", "request" if mode != "BLOCKING" else "NULL"]
    body = [head, "{"]
    if mode == "PERSISTENT":
        body.append("    (void)info;")
    call = f"{coll_call_name(blocking)}({', '.join(args)})"
    if not post:
        body.append(f"    return {call};")
    else:
        body += ["    " + x for x in pre]
        body.append(f"    int rc = {post[0]};")
        body += [f"    WEFT_TRY(rc, {w});" for w in post[1:]]
        body.append(f"    WEFT_TRY(rc, {call});")
        body += [f"    weft_coll_widen_free({p}_w, {p}_s);" for p in [a[:-2] for a in args if a.endswith("_w")]]
        body.append("    return rc;")
    body.append("}")
    return "\n".join(body) + "\n"


def write_coll(out_dir, funcs):
    colls = [f for f in funcs.values() if f.listed and "coll" in f.directives
             and not getattr(f, "shares_impl", False)]
    calls = {}
    for f in colls:
        b = coll_form(f, funcs)[1]
        calls[b.name] = b
    header = ["/* GENERATED by src/api/gen_api.py: the weft_coll_call_*() functions the",
              " * generated collective impls (coll_gen.c) call; defined in src/coll/coll_api.c. */",
              "#ifndef WEFT_COLL_GEN_H", "#define WEFT_COLL_GEN_H",
              "#include <mpi.h>", "#include \"core/object_types.h\"", ""]
    header += [coll_call_prototype(b, funcs) + ";" for b in calls.values()]
    header.append("#endif")
    body = ["/* GENERATED by src/api/gen_api.py from src/api/kinds/coll.txt (directive coll):",
            " * the impls of the collective entry points. */",
            "#include <stdlib.h>", "#include \"api_impl.h\"", "#include \"coll_gen.h\"",
            "#include \"coll/coll_internal.h\"", ""]
    body += [gen_coll_impl(f, funcs) for f in colls]
    (out_dir / "coll_gen.h").write_text("\n".join(header) + "\n")
    (out_dir / "coll_gen.c").write_text("\n".join(body) + "\n")


def write_status(path, funcs, notes=None):
    cats = {}
    for f in funcs.values():
        cats.setdefault(f.category, []).append(f)
    total = len(funcs)
    done = sum(1 for f in funcs.values() if is_implemented(f, funcs))
    out = ["# Weft MPI API status", "",
           "Generated by `src/api/gen_api.py` from `maint/abi/functions.tsv` and "
           "`src/api/kinds/*.txt` at every build (`make` copies it here). A function is "
           "*implemented* when it has a real implementation; *missing* functions are exported "
           "but return `MPI_ERR_UNSUPPORTED_OPERATION` through the error handler with a "
           "message naming the function.", "",
           f"**{done} of {total} ABI functions implemented.**", "",
           "| category | implemented | missing |", "|---|---|---|"]
    for cat in sorted(cats):
        fs = cats[cat]
        n = sum(1 for f in fs if is_implemented(f, funcs))
        out.append(f"| {cat} | {n} | {len(fs) - n} |")
    for cat in sorted(cats):
        out += ["", f"## {cat}", ""]
        for f in sorted(cats[cat], key=lambda f: f.name):
            state = "implemented" if is_implemented(f, funcs) else "missing"
            out.append(f"- `{f.name}`: {state}")
    if notes and pathlib.Path(notes).exists():
        out += ["", pathlib.Path(notes).read_text().rstrip()]
    pathlib.Path(path).write_text("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--functions", required=True)
    ap.add_argument("--kinds-dir", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--status", required=True)
    ap.add_argument("--notes", help="hand-written notes appended to STATUS.md")
    o = ap.parse_args()
    with open(o.functions, newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["in_abi_header"] == "yes"]
    funcs = {r["name"]: Function(r) for r in rows}
    read_kinds(o.kinds_dir, funcs)
    out_dir = pathlib.Path(o.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    body = ["/* GENERATED by src/api/gen_api.py: do not edit. */",
            "#include \"api/api.h\"", "#include \"api_impl.h\"", ""]
    protos = ["/* GENERATED by src/api/gen_api.py: prototypes of the weft_*_impl functions. */",
              "#ifndef WEFT_API_IMPL_H", "#define WEFT_API_IMPL_H",
              "#include <mpi.h>", "#include \"core/object_types.h\"", ""]
    for f in funcs.values():
        if f.listed and "custom" not in f.directives:
            protos.append(impl_prototype(f, funcs))
            body.append(gen_wrapper(f, funcs))
        elif f.listed:
            continue
        elif is_implemented(f, funcs):
            body.append(gen_wrapper(f, funcs))
        else:
            # The error goes to the handler of the object the call names
            # (its comm, win, file or session), as for implemented calls.
            eo = error_object(f)
            conv = None
            if eo:
                etype = next(p for p in f.params if p.name == eo).base_type
                conv = {"MPI_Comm": "comm", "MPI_Win": "win", "MPI_File": "file",
                        "MPI_Session": "session"}[etype]
            voids = "".join(f"    (void){p.name};\n" for p in f.params if p.name and p.name != eo)
            stub = STUB.format(sig=f.signature("PMPI_"), name=f.name, voids=voids,
                               dispatch_open=f"weft_err_dispatch_{conv}({eo}, " if conv else
                               "weft_err_dispatch_comm(MPI_COMM_SELF, ",
                               dispatch_close=")")
            if f.ret != "int":
                # The error goes through the handler; the value is only what
                # a caller under MPI_ERRORS_RETURN gets back.
                stub = stub.replace("return weft_api_unsupported(", f"return ({f.ret})weft_api_unsupported(")
            body.append(stub)
    protos.append("#endif")
    (out_dir / "api_gen.c").write_text("\n".join(body) + "\n")
    (out_dir / "api_impl.h").write_text("\n".join(protos) + "\n")
    (out_dir / "api_gen.h").write_text("/* GENERATED: see api_impl.h */\n#include \"api_impl.h\"\n")
    write_coll(out_dir, funcs)
    write_status(o.status, funcs, o.notes)


if __name__ == "__main__":
    main()
