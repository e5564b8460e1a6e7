# A gdb script for `cairn-bench embed`: the program runs as on a CPU with AVX2 alone.
#
# Every CPUID instruction in ONNX Runtime's library is stepped over and its answer masked:
# AVX-512 (all of its parts), AVX-512 VNNI and AVX-VNNI are cleared from leaf 7, so the
# library picks the kernels it picks on a CPU without them (AMD Zen 2 and 3, Intel before
# Ice Lake). The code still runs on this CPU's cores.
#
# Run as: gdb -batch -nx -x cpuid_mask.py --args PROGRAM ARGS...
# How many answers were masked is written as JSON to $CAIRN_CPUID_MASK_REPORT.
import json
import os
import re
import subprocess

import gdb

LIBRARIES = ("libonnxruntime",)


def bits(*numbers):
    mask = 0
    for n in numbers:
        mask |= 1 << n
    return mask


# Leaf 7, sub-leaf 0: EBX AVX512F, DQ, IFMA, CD, BW, VL; ECX VBMI, VBMI2, VNNI, BITALG,
# VPOPCNTDQ; EDX VP2INTERSECT, FP16.
LEAF7 = {"rbx": bits(16, 17, 21, 28, 30, 31), "rcx": bits(1, 6, 11, 12, 14), "rdx": bits(8, 23)}
# Leaf 7, sub-leaf 1: EAX AVX-VNNI, AVX512_BF16, AVX-IFMA; EDX AVX-VNNI-INT8, AVX-NE-CONVERT,
# AVX-VNNI-INT16, AVX10.
LEAF7_1 = {"rax": bits(4, 5, 23), "rdx": bits(4, 5, 10, 19)}

sites = {}
masked = {}


def library_base(path):
    """Where the library's first page is mapped in the running program."""
    real = os.path.realpath(path)
    with open("/proc/%d/maps" % gdb.selected_inferior().pid) as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[5] in (path, real) and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16)
    return None


def on_new_objfile(event):
    path = event.new_objfile.filename or ""
    name = os.path.basename(path)
    if not name.startswith(LIBRARIES) or name in masked:
        return
    base = library_base(path)
    if base is None:
        return
    masked[name] = 0
    listing = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", os.path.realpath(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for found in re.finditer(r"^\s*([0-9a-f]+):\s+cpuid\b", listing, re.M):
        address = base + int(found.group(1), 16)
        sites[address] = name
        gdb.Breakpoint("*0x%x" % address, internal=True)


def register(name):
    return int(gdb.selected_frame().read_register(name)) & 0xFFFFFFFF


def step_over_cpuid(library):
    leaf, subleaf = register("rax"), register("rcx")
    gdb.execute("stepi", to_string=True)
    clear = LEAF7 if (leaf, subleaf) == (7, 0) else LEAF7_1 if (leaf, subleaf) == (7, 1) else {}
    for name, mask in clear.items():
        gdb.execute("set $%s = %d" % (name, register(name) & ~mask & 0xFFFFFFFF))
    if clear:
        masked[library] += 1


def running():
    inferior = gdb.selected_inferior()
    return inferior.pid != 0 and len(inferior.threads()) > 0


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set print thread-events off")
gdb.execute("set print inferior-events off")
gdb.execute("handle SIGPIPE SIGUSR1 SIGUSR2 SIGCHLD SIG34 SIG35 nostop noprint pass")
gdb.events.new_objfile.connect(on_new_objfile)
gdb.execute("run", to_string=True)
status = None
while running():
    try:
        pc = int(gdb.selected_frame().pc())
    except gdb.error:
        break
    if pc in sites:
        step_over_cpuid(sites[pc])
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
try:
    status = int(gdb.parse_and_eval("$_exitcode"))
except (gdb.error, TypeError, ValueError):
    status = None
report = os.environ.get("CAIRN_CPUID_MASK_REPORT")
if report:
    with open(report, "w") as out:
        json.dump({"masked": masked, "exit_code": status}, out)
gdb.execute("quit %d" % (status if status is not None else 1))
